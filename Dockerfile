# fleetmesh: one image for the broker and the agent; the command picks the role:
#   docker run IMAGE broker …      docker run IMAGE agent …      docker run IMAGE bootstrap …
# It runs as the user node (uid 1000); only the agent's deployments run it as root, with every
# capability dropped but the two that read the host's processes (README, "The host seen from a container").
#
# Targets. `docker build .` with BuildKit (Docker's default builder) builds the last one,
# release, and only the stages it needs. The classic builder (DOCKER_BUILDKIT=0, what the
# tests use with a base image imported into the engine) builds every stage up to the
# target, so the prebuilt stages come first and need nothing but the staged context:
#   runtime          the base: node, a data root, an unprivileged user, labels, the health check; no fleetmesh yet
#   prebuilt-app     runtime + an already built dist/ and production node_modules taken from the
#                    build context: no network and no registry needed (the tests and
#                    `npm run release -- --image-target prebuilt` stage that context:
#                    scripts/release/image-context.ts)
#   prebuilt-sbom    prebuilt-app + the SBOM generator staged in the context, run on the installed tree
#   prebuilt         prebuilt-app + the SBOM: what the tests run
#   build            npm ci, npm run build, the SBOM, npm prune (needs the npm registry)
#   release          runtime + what build produced: the default target
#
# BASE_IMAGE must provide node 24 (or 20) at /usr/local/bin/node, npm on PATH (for the SBOM
# generator's `npm ls`), /bin/sh, and a user "node" with uid 1000, as the official node images do.
# FLEETMESH_VERSION is the image's version label; npm run release sets this default with the
# package's version, and passes it explicitly too.

ARG BASE_IMAGE=node:24-bookworm-slim
ARG BUILD_IMAGE=node:24-bookworm

FROM ${BASE_IMAGE} AS runtime
ARG FLEETMESH_VERSION=0.1.0
LABEL org.opencontainers.image.title="fleetmesh" \
      org.opencontainers.image.description="Operate a fleet of hosts from one MCP endpoint: the fleetmesh broker and agent (the command picks the role)." \
      org.opencontainers.image.source="https://github.com/fleetmesh/fleetmesh" \
      org.opencontainers.image.url="https://github.com/fleetmesh/fleetmesh" \
      org.opencontainers.image.version="${FLEETMESH_VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      io.fleetmesh.sbom="/opt/fleetmesh/sbom.cdx.json"
# /var/lib/fleetmesh is the data root (mount a volume there). It is sticky and
# world-writable like /tmp, so the broker and the agent can run as whichever
# uid owns their secrets (docker-compose.yml: FLEETMESH_UID); each creates its
# own state dir inside it with mode 0700.
RUN mkdir -p /var/lib/fleetmesh \
 && chmod 1777 /var/lib/fleetmesh \
 && ln -s /opt/fleetmesh/bin/fleetmesh.cjs /usr/local/bin/fleetmesh
WORKDIR /var/lib/fleetmesh
ENV NODE_ENV=production
USER node
EXPOSE 7400 7443
# Probes /readyz of whichever role the container runs (bin/healthcheck.js): the broker's MCP
# listener, or the agent's --health-listen; an agent without one has nothing to probe.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/opt/fleetmesh/bin/healthcheck.js"]
# The broker keeps V8's defaults. The agent runs dist/agent.cjs, the agent alone in one CommonJS file
# (2.3 MiB less than the ES modules of the other commands), with --max-semi-space-size=1 --lite-mode
# --bytecode-old-age=1, which keep 14, 13 and 1.2 MiB of an idle agent's memory free (docs/performance.md):
# `docker run IMAGE agent …` through bin/fleetmesh.cjs, which replaces itself with that command line (same
# pid), and the agent's deployments (docker-compose.yml, the Helm chart) by naming it as their entrypoint.
ENTRYPOINT ["node", "/opt/fleetmesh/bin/fleetmesh.cjs"]
CMD ["--help"]

FROM runtime AS prebuilt-app
COPY package.json package-lock.json /opt/fleetmesh/
COPY bin/fleetmesh.cjs bin/fleetmesh.js bin/healthcheck.js /opt/fleetmesh/bin/
COPY node_modules /opt/fleetmesh/node_modules/
COPY dist /opt/fleetmesh/dist/

FROM prebuilt-app AS prebuilt-sbom
COPY sbom-generator /tmp/sbom-generator/
RUN node /tmp/sbom-generator/node_modules/@cyclonedx/cyclonedx-npm/bin/cyclonedx-npm-cli.js \
      --omit dev --output-reproducible --output-format JSON --output-file /tmp/sbom.cdx.json /opt/fleetmesh/package.json

FROM prebuilt-app AS prebuilt
COPY --from=prebuilt-sbom /tmp/sbom.cdx.json /opt/fleetmesh/sbom.cdx.json

FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# better-sqlite3 is a native module: npm runs its install script here, as package.json's
# allowScripts permits (the build image has python3, make and g++ in case no prebuilt binary fits).
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY shared shared/
COPY broker broker/
COPY agent agent/
COPY cli cli/
COPY web web/
# The SBOM is made from the installed tree before the build tools are pruned from it, by the
# generator package-lock.json pins (a devDependency), of the production dependencies only.
RUN npx tsc -p tsconfig.build.json --sourceMap false && npm run build:web \
 && npx cyclonedx-npm --omit dev --output-reproducible --output-format JSON --output-file sbom.cdx.json package.json \
 && npm prune --omit=dev

FROM runtime AS release
COPY --from=build /src/package.json /src/package-lock.json /opt/fleetmesh/
COPY bin/fleetmesh.cjs bin/fleetmesh.js bin/healthcheck.js /opt/fleetmesh/bin/
COPY --from=build /src/node_modules /opt/fleetmesh/node_modules/
COPY --from=build /src/dist /opt/fleetmesh/dist/
COPY --from=build /src/sbom.cdx.json /opt/fleetmesh/sbom.cdx.json

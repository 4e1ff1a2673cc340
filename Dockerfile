# fleetmesh: one image for the broker and the agent; the command picks the role:
#   docker run IMAGE broker …      docker run IMAGE agent …      docker run IMAGE bootstrap …
#
# Targets (the classic builder builds every stage up to the target, so the
# order below matters):
#   runtime   the base: node, a data root, an unprivileged user; no fleetmesh yet
#   prebuilt  runtime + an already built dist/ and production node_modules taken
#             from the build context: no network and no registry needed (the
#             tests build this from a staged context: test/harness/fleetmesh-image.ts)
#   build     npm ci and npm run build (needs the npm registry)
#   release   runtime + what build produced: the default target
#
# BASE_IMAGE must provide node 24 (or 20) at /usr/local/bin/node, /bin/sh, and a user
# "node" with uid 1000, as the official node images do.

ARG BASE_IMAGE=node:24-bookworm-slim
ARG BUILD_IMAGE=node:24-bookworm

FROM ${BASE_IMAGE} AS runtime
# /var/lib/fleetmesh is the data root (mount a volume there). It is sticky and
# world-writable like /tmp, so the broker and the agent can run as whichever
# uid owns their secrets (docker-compose.yml: FLEETMESH_UID); each creates its
# own state dir inside it with mode 0700.
RUN mkdir -p /var/lib/fleetmesh \
 && chmod 1777 /var/lib/fleetmesh \
 && ln -s /opt/fleetmesh/bin/fleetmesh.js /usr/local/bin/fleetmesh
WORKDIR /var/lib/fleetmesh
ENV NODE_ENV=production
USER node
EXPOSE 7400 7443
# The broker keeps V8's defaults; the agent's deployments (docker-compose.yml, the Helm chart) override
# the entrypoint to add --max-semi-space-size=1 --lite-mode, which keep 14 and 13 MiB of an idle agent's
# memory free (docs/performance.md).
ENTRYPOINT ["node", "/opt/fleetmesh/bin/fleetmesh.js"]
CMD ["--help"]

FROM runtime AS prebuilt
COPY package.json /opt/fleetmesh/
COPY bin/fleetmesh.js /opt/fleetmesh/bin/
COPY node_modules /opt/fleetmesh/node_modules/
COPY dist /opt/fleetmesh/dist/

FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# better-sqlite3 is a native module: npm runs its install script here (the build
# image has python3, make and g++ in case no prebuilt binary fits).
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY shared shared/
COPY broker broker/
COPY agent agent/
COPY cli cli/
COPY web web/
RUN npm run build && npm prune --omit=dev

FROM runtime AS release
COPY --from=build /src/package.json /opt/fleetmesh/
COPY bin/fleetmesh.js /opt/fleetmesh/bin/
COPY --from=build /src/node_modules /opt/fleetmesh/node_modules/
COPY --from=build /src/dist /opt/fleetmesh/dist/

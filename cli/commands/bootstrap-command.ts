import { join, resolve } from 'node:path';
import { BOOTSTRAP_FILES, BUS_TLS_FILES, CA_KEY_SECRET_FILE, type WrittenBootstrap, writeBootstrapFiles } from '../../broker/bootstrap/bootstrap-files.ts';
import { BOOTSTRAP_ADMIN_NAME } from '../../broker/bootstrap/broker-bootstrap.ts';
import { defineCommand } from '../command.ts';

type Format = 'compose' | 'helm-values' | 'env';

export const bootstrapCommand = defineCommand({
  spec: {
    name: 'bootstrap',
    summary: 'Make a broker CA, a reusable join token and an admin token as files, before any broker runs (for Docker and Kubernetes secrets).',
    usage: 'fleetmesh bootstrap --out DIR [--format compose|helm-values|env]',
    details: `Writes ${[...Object.values(BOOTSTRAP_FILES), ...Object.values(BUS_TLS_FILES), CA_KEY_SECRET_FILE].join(', ')} to DIR (secrets mode 0600), then prints how to use them. A broker started with --ca-cert-file, --ca-key-file, --join-token-file and --admin-token-file uses that CA, accepts that join token and that admin token; agents given the join token and the pin enroll by themselves. Secret values are never printed.`,
    flags: {
      out: {
        type: 'string',
        description: 'the directory to write (must not hold these files yet)',
        default: 'fleetmesh-secrets',
        placeholder: 'DIR',
        env: false,
      },
      format: {
        type: 'string',
        description: 'what to print: docker compose and stack commands, Helm values, or environment variables',
        default: 'compose',
        choices: ['compose', 'helm-values', 'env'],
        placeholder: 'FORMAT',
        env: false,
      },
    },
  },
  async run(parsed, io) {
    const out = resolve(parsed.values.out);
    const written = await writeBootstrapFiles(out);
    const format = parsed.values.format as Format;
    io.stdout(`${format === 'env' ? envText(written) : format === 'helm-values' ? helmValuesText(written) : composeText(written)}\n`);
    return 0;
  },
});

function summary(written: WrittenBootstrap, prefix: string): string[] {
  return [
    `${prefix}Wrote to ${written.dir}:`,
    `${prefix}  ${BOOTSTRAP_FILES.caCert.padEnd(12)} the broker CA certificate`,
    `${prefix}  ${BOOTSTRAP_FILES.caKey.padEnd(12)} its private key (mode 0600)`,
    `${prefix}  ${BOOTSTRAP_FILES.joinToken.padEnd(12)} a reusable join token for agents, id ${written.joinTokenId} (mode 0600)`,
    `${prefix}  ${BOOTSTRAP_FILES.caPin.padEnd(12)} ${written.pin}, the pin agents check the CA against`,
    `${prefix}  ${BOOTSTRAP_FILES.adminToken.padEnd(12)} the bearer token of identity ${BOOTSTRAP_ADMIN_NAME}, level 3, id ${written.adminTokenId} (mode 0600)`,
    `${prefix}  ${BUS_TLS_FILES.cert.padEnd(12)} a TLS certificate of that CA for NATS, named nats (a broker cluster's bus)`,
    `${prefix}  ${BUS_TLS_FILES.key.padEnd(12)} its private key (mode 0600)`,
    `${prefix}  ${CA_KEY_SECRET_FILE.padEnd(12)} a random secret a broker cluster's store seals the CA key with (--ca-key-secret-file; mode 0600)`,
  ];
}

/** The README's compose and stack sequences, with this directory filled in. */
function composeText(written: WrittenBootstrap): string {
  return [
    ...summary(written, ''),
    '',
    'With docker-compose.yml (in the fleetmesh repository root):',
    `  export FLEETMESH_SECRETS=${written.dir} FLEETMESH_UID=$(id -u) FLEETMESH_GID=$(id -g)`,
    '  docker compose up -d                                   # one host',
    '  docker stack deploy -c docker-compose.yml fleetmesh    # a stack: the agent runs on every node of the cluster',
    '',
    `MCP endpoint: http://localhost:7400/mcp with the header "Authorization: Bearer $(cat ${join(written.dir, BOOTSTRAP_FILES.adminToken)})".`,
    'A host outside Docker joins with:',
    `  fleetmesh agent --broker BROKER_HOST:7443 --token-file ${join(written.dir, BOOTSTRAP_FILES.joinToken)} --ca-pin ${written.pin}`,
  ].join('\n');
}

/** Values for charts/fleetmesh; the secret material stays in its files and goes into a Secret. */
function helmValuesText(written: WrittenBootstrap): string {
  return [
    '# fleetmesh bootstrap: Helm values for charts/fleetmesh.',
    ...summary(written, '# '),
    '#',
    '# Put the files into a Secret (they stay out of your values), then install with this file:',
    '#   kubectl create namespace fleetmesh',
    `#   kubectl -n fleetmesh create secret generic fleetmesh-bootstrap --from-file=${written.dir}`,
    '#   helm install fleetmesh ./charts/fleetmesh -n fleetmesh -f THIS_FILE',
    'bootstrap:',
    '  existingSecret: fleetmesh-bootstrap',
  ].join('\n');
}

/** Environment variables for a broker and agents run outside containers (`set -a; . FILE; set +a`). */
function envText(written: WrittenBootstrap): string {
  const file = (name: string) => join(written.dir, name);
  return [
    ...summary(written, '# '),
    '# The broker:',
    `FLEETMESH_CA_CERT_FILE=${file(BOOTSTRAP_FILES.caCert)}`,
    `FLEETMESH_CA_KEY_FILE=${file(BOOTSTRAP_FILES.caKey)}`,
    `FLEETMESH_JOIN_TOKEN_FILE=${file(BOOTSTRAP_FILES.joinToken)}`,
    `FLEETMESH_ADMIN_TOKEN_FILE=${file(BOOTSTRAP_FILES.adminToken)}`,
    '# Agents (with FLEETMESH_BROKER=HOST:7443):',
    `FLEETMESH_TOKEN_FILE=${file(BOOTSTRAP_FILES.joinToken)}`,
    `FLEETMESH_CA_PIN_FILE=${file(BOOTSTRAP_FILES.caPin)}`,
  ].join('\n');
}

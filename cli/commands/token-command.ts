import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { createJoinTokenAs, revokeJoinTokenAs } from '../../broker/admin/join-token-admin.ts';
import { META_AGENT_ADDRESS } from '../../broker/broker.ts';
import { AGENT_ROLE_NAMES } from '../../broker/domains/broker-domains.ts';
import { enrollmentPins } from '../../broker/pki/fleet-authority.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { formatTable, formatUntil } from '../../shared/format/table.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import type { FlagSpec } from '../../shared/options/command-line.ts';
import { BROKER_DATA_DIR_FLAG, OUTPUT_FLAG } from '../../shared/options/common-flags.ts';
import { formatDurationMs, formatLabels } from '../../shared/options/values.ts';
import { agentLauncher, currentLaunchPlace } from '../agent-launcher.ts';
import { defineCommand } from '../command.ts';
import { freeAgentName } from '../free-agent-name.ts';
import { shellOperator } from '../shell-operator.ts';

/** Where the printed agent command keeps the identity, one directory per token (relative to where it runs). */
const AGENTS_DIR = '.fleetmesh/agents';

const CREATE_FLAGS = {
  ...BROKER_DATA_DIR_FLAG,
  ttl: { type: 'duration', description: 'how long the token can be used', default: '1h', min: 1000, placeholder: 'DURATION', env: false },
  uses: { type: 'integer', description: 'how many agents may enroll with it (default 1)', min: 1, max: 1_000_000, placeholder: 'N', env: false },
  reusable: { type: 'boolean', description: 'any number of agents until it expires (DaemonSets, stacks)', default: false, env: false },
  labels: { type: 'labels', description: 'labels every agent enrolled with it gets', default: {}, placeholder: 'K=V,…', env: false },
  roles: {
    type: 'list',
    description: `roles its agents hold over the shared objects they manage, without further approval: ${AGENT_ROLE_NAMES.join(', ')}`,
    default: [],
    placeholder: 'ROLE,…',
    env: false,
  },
  'broker-address': {
    type: 'string',
    description: 'the HOST:PORT agents dial, for the printed command (default: what the broker advertises)',
    placeholder: 'HOST:PORT',
    env: false,
  },
  ...OUTPUT_FLAG,
} as const satisfies Record<string, FlagSpec>;

export const tokenCreateCommand = defineCommand({
  spec: {
    name: 'token create',
    summary: 'Create a join token for enrolling agents, and print the exact agent command line that uses it.',
    usage: 'fleetmesh token create [--ttl 1h] [--uses N | --reusable] [--labels k=v,…] [--roles ROLE,…]',
    details: 'Only a hash of the token is stored; the token is shown once. Works while the broker runs.',
    flags: CREATE_FLAGS,
  },
  async run(parsed, io) {
    const { values } = parsed;
    const dataDir = resolve(values['data-dir']);
    if (values.reusable && values.uses !== undefined) {
      throw new FleetError('invalid_argument', 'token create: --uses and --reusable cannot be combined', {
        hint: 'Pick one: --uses N for N agents, --reusable for any number.',
      });
    }
    const unknownRole = values.roles.find((role) => !AGENT_ROLE_NAMES.includes(role));
    if (unknownRole !== undefined) {
      throw new FleetError('invalid_argument', `token create: "${unknownRole}" is not a role`, { hint: `Roles: ${AGENT_ROLE_NAMES.join(', ')}.` });
    }
    const store = await BrokerStore.open(dataDir, { store: values.store });
    try {
      const [pin = ''] = await enrollmentPins(store, dataDir, silentLogger);
      const created = await createJoinTokenAs(store, shellOperator(), {
        ttlMs: values.ttl,
        uses: values.reusable ? null : (values.uses ?? 1),
        labels: values.labels,
        roles: values.roles,
      });
      const address = values['broker-address'] ?? (await store.getMeta(META_AGENT_ADDRESS)) ?? `${hostname()}:7443`;
      // A data dir of its own: where the broker runs, the default one (.fleetmesh/agent) is its local agent's identity.
      // A name no enrolled agent holds (the broker's own local agent is often named after this host), and a launcher that works here.
      // The agent is named after its host by default; when this host's name is taken, run here it needs another.
      const here = hostname();
      const name = freeAgentName(
        here,
        (await store.agents.list()).map((agent) => agent.name),
      );
      const named = name === here ? '' : ` --name ${name}`;
      const command = `${agentLauncher(currentLaunchPlace())} agent --broker ${address} --token ${created.token} --ca-pin ${pin}${named} --data-dir ${AGENTS_DIR}/${created.id}`;
      if (values.output === 'json') {
        io.stdout(
          `${JSON.stringify(
            {
              token: created.token,
              token_id: created.id,
              ca_pin: pin,
              broker: address,
              expires_at_unix_ms: created.expiresAt,
              uses_allowed: created.usesAllowed,
              labels: created.labels,
              roles: created.roles,
              agent_command: command,
            },
            null,
            2,
          )}\n`,
        );
        return 0;
      }
      const uses = created.usesAllowed === null ? 'reusable' : `${created.usesAllowed} use${created.usesAllowed === 1 ? '' : 's'}`;
      io.stdout(
        [
          `Join token ${created.id} (${uses}, expires ${new Date(created.expiresAt).toISOString()}, in ${formatDurationMs(values.ttl)}${Object.keys(created.labels).length ? `, labels ${formatLabels(created.labels)}` : ''}${created.roles.length ? `, roles ${created.roles.join(',')}` : ''}):`,
          `  ${created.token}`,
          'Broker CA pin:',
          `  ${pin}`,
          '',
          `On the host to enroll, run (${named ? `--name: ${here} is taken by an enrolled agent; change it on another host` : 'add --name NAME to choose its name; it defaults to the host name'}). Later runs need only its --data-dir:`,
          `  ${command}`,
          '',
          'The token is shown only this once; the broker keeps only its hash.',
          '',
        ].join('\n'),
      );
      return 0;
    } finally {
      await store.close();
    }
  },
});

export const tokenListCommand = defineCommand({
  spec: {
    name: 'token list',
    summary: 'List join tokens: id, uses, expiry, labels, roles (never the secret).',
    usage: 'fleetmesh token list',
    flags: { ...BROKER_DATA_DIR_FLAG, ...OUTPUT_FLAG },
  },
  async run(parsed, io) {
    const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
    try {
      const now = Date.now();
      const tokens = await store.tokens.list();
      if (parsed.values.output === 'json') {
        io.stdout(
          `${JSON.stringify(
            tokens.map((t) => ({
              token_id: t.id,
              uses: t.uses,
              uses_allowed: t.usesAllowed,
              expires_at_unix_ms: t.expiresAt,
              labels: t.labels,
              roles: t.roles,
              revoked: t.revokedAt !== null,
            })),
            null,
            2,
          )}\n`,
        );
        return 0;
      }
      const rows = tokens.map((t) => {
        const status =
          t.revokedAt !== null ? 'revoked' : t.expiresAt <= now ? 'expired' : t.usesAllowed !== null && t.uses >= t.usesAllowed ? 'used up' : 'usable';
        return [t.id, status, `${t.uses}/${t.usesAllowed ?? '∞'}`, formatUntil(t.expiresAt, now), formatLabels(t.labels) || '-', t.roles.join(',') || '-'];
      });
      io.stdout(`${formatTable(['TOKEN ID', 'STATUS', 'USES', 'EXPIRES', 'LABELS', 'ROLES'], rows)}\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});

export const tokenRevokeCommand = defineCommand({
  spec: {
    name: 'token revoke',
    summary: 'Revoke a join token so no further agent can enroll with it (enrolled agents stay).',
    usage: 'fleetmesh token revoke TOKEN_ID',
    positionals: [{ name: 'TOKEN_ID', description: 'the token id (second part of fm1.<id>.<secret>)', required: true }],
    flags: { ...BROKER_DATA_DIR_FLAG },
  },
  async run(parsed, io) {
    const id = parsed.positionals[0] ?? '';
    const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
    try {
      await revokeJoinTokenAs(store, shellOperator(), id);
      io.stdout(`revoked join token ${id}\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});

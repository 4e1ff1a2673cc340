import { resolve } from 'node:path';
import { createIdentityAs, revokeIdentityAs } from '../../broker/admin/identity-admin.ts';
import { parseToolGlobs, ToolFilter } from '../../broker/auth/tool-filter.ts';
import { META_MCP_URL } from '../../broker/broker.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import type { Level } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { formatTable, formatUntil } from '../../shared/format/table.ts';
import type { FlagSpec } from '../../shared/options/command-line.ts';
import { BROKER_DATA_DIR_FLAG, OUTPUT_FLAG } from '../../shared/options/common-flags.ts';
import { clientConfig } from '../client-config.ts';
import { defineCommand } from '../command.ts';
import { shellOperator } from '../shell-operator.ts';

/** Tools switched off for one identity, or for the people a mapping rule maps. */
export const IDENTITY_TOOLS_FLAGS = {
  'disable-tools': {
    type: 'list',
    description: 'tools switched off for it: globs over tool names and action ids',
    default: [],
    placeholder: 'GLOB,…',
    env: false,
  },
  'enable-tools': { type: 'list', description: 'when given, the only tools it is offered', default: [], placeholder: 'GLOB,…', env: false },
} as const satisfies Record<string, FlagSpec>;

export function toolGlobsOf(values: { 'disable-tools': string[]; 'enable-tools': string[] }) {
  return { disable: parseToolGlobs(values['disable-tools'], '--disable-tools'), enable: parseToolGlobs(values['enable-tools'], '--enable-tools') };
}

export const identityCreateCommand = defineCommand({
  spec: {
    name: 'identity create',
    summary: 'Create an MCP client identity and print its bearer token (shown once; stored hashed).',
    usage: 'fleetmesh identity create NAME --level 0..3 [--grant KIND:PATTERN[=read|write] …] [--disable-tools GLOB,…] [--enable-tools GLOB,…] [--ttl 90d]',
    details:
      "The level caps which tools the identity sees (0 read-only … 3 impactful; the broker --operations-level caps it again). Grants narrow what it sees and may change, such as host:web-* or container:web-1/nginx*=write; without --grant it has *:*=write. --disable-tools and --enable-tools switch tools off for this identity alone, beside the broker's own.",
    positionals: [{ name: 'NAME', description: 'who or what uses it, such as claude-desktop or ci', required: true }],
    flags: {
      ...BROKER_DATA_DIR_FLAG,
      level: { type: 'integer', description: 'operations level 0-3', min: 0, max: 3, placeholder: 'N', env: false },
      grant: { type: 'list', description: 'a grant; repeat for several', repeatable: true, default: [], placeholder: 'KIND:PATTERN[=read|write]', env: false },
      ttl: { type: 'duration', description: 'how long the token is valid', default: '90d', min: 60_000, placeholder: 'DURATION', env: false },
      ...IDENTITY_TOOLS_FLAGS,
      ...OUTPUT_FLAG,
    },
  },
  async run(parsed, io) {
    const { values } = parsed;
    if (values.level === undefined)
      throw new FleetError('invalid_argument', 'missing --level', { hint: 'Give --level 0 (read-only), 1 (operational), 2 (configuration) or 3 (impactful).' });
    const store = await BrokerStore.open(resolve(values['data-dir']), { store: values.store });
    try {
      const name = parsed.positionals[0] ?? '';
      const { token, row } = await createIdentityAs(store, shellOperator(), {
        name,
        level: values.level as Level,
        grants: values.grant,
        tools: toolGlobsOf(values),
        ...(values.ttl !== undefined ? { ttlMs: values.ttl } : {}),
      });
      const created = { id: row.id, token, expiresAt: row.expiresAt };
      const url = (await store.getMeta(META_MCP_URL)) ?? 'http://127.0.0.1:7400/mcp';
      if (values.output === 'json') {
        io.stdout(
          `${JSON.stringify({ name, id: created.id, level: values.level, grants: row.grants, expires_at_unix_ms: created.expiresAt, token: created.token, url }, null, 2)}\n`,
        );
        return 0;
      }
      io.stdout(
        [
          `Identity ${name} (level ${values.level}, grants ${row.grants.join(' ')}, expires ${new Date(created.expiresAt).toISOString()}).`,
          'Bearer token (shown only this once):',
          `  ${created.token}`,
          '',
          'Client configuration:',
          JSON.stringify(clientConfig(url, created.token), null, 2),
          '',
        ].join('\n'),
      );
      return 0;
    } finally {
      await store.close();
    }
  },
});

export const identityListCommand = defineCommand({
  spec: {
    name: 'identity list',
    summary: 'List MCP client identities: name, level, grants, expiry, last use.',
    usage: 'fleetmesh identity list [--all]',
    flags: {
      ...BROKER_DATA_DIR_FLAG,
      all: { type: 'boolean', description: 'include revoked identities', default: false, env: false },
    },
  },
  async run(parsed, io) {
    const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
    try {
      const rows = (await store.identities.list({ includeRevoked: parsed.values.all })).map((i) => [
        i.name,
        i.kind === 'person' ? `person of ${i.issuer}` : 'token',
        String(i.level),
        i.grants.join(' '),
        new ToolFilter(i.tools).describe() || '-',
        i.revokedAt !== null ? 'revoked' : formatUntil(i.expiresAt),
        i.lastUsedAt ? new Date(i.lastUsedAt).toISOString() : 'never',
        i.id,
      ]);
      io.stdout(
        rows.length
          ? `${formatTable(['NAME', 'KIND', 'LEVEL', 'GRANTS', 'TOOLS OFF', 'EXPIRES', 'LAST USED', 'ID'], rows)}\n`
          : 'No identities yet: fleetmesh identity create NAME --level N\n',
      );
      return 0;
    } finally {
      await store.close();
    }
  },
});

export const identityRevokeCommand = defineCommand({
  spec: {
    name: 'identity revoke',
    summary: 'Revoke an MCP client identity: its token stops working at its next request.',
    usage: 'fleetmesh identity revoke NAME',
    positionals: [{ name: 'NAME', description: 'the identity name or id', required: true }],
    flags: { ...BROKER_DATA_DIR_FLAG },
  },
  async run(parsed, io) {
    const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
    try {
      const wanted = parsed.positionals[0] ?? '';
      const row = await revokeIdentityAs(store, shellOperator(), wanted);
      io.stdout(`revoked identity ${row.name}\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});

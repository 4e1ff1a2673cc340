import { resolve } from 'node:path';
import { statedClaims } from '../../broker/agents/claims.ts';
import { AGENT_ROLES } from '../../broker/domains/broker-domains.ts';
import { ANY_SCOPE } from '../../broker/store/agent-roles-table.ts';
import { effectiveLabels } from '../../broker/store/agents-table.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { formatAgo, formatTable, formatUntil } from '../../shared/format/table.ts';
import { BROKER_DATA_DIR_FLAG, OUTPUT_FLAG } from '../../shared/options/common-flags.ts';
import { formatLabels } from '../../shared/options/values.ts';
import { brokerRunning } from '../broker-process.ts';
import { defineCommand } from '../command.ts';

export const agentsCommand = defineCommand({
  spec: {
    name: 'agents',
    summary: "List the broker's agents: name, state, version, labels, last seen, certificate expiry.",
    usage: 'fleetmesh agents [--all] [--output text|json]',
    details: 'Reads the broker data dir, so it works on the broker host whether or not the broker runs.',
    flags: {
      ...BROKER_DATA_DIR_FLAG,
      all: { type: 'boolean', description: 'include revoked agents', default: false, env: false },
      ...OUTPUT_FLAG,
    },
  },
  async run(parsed, io) {
    const dataDir = resolve(parsed.values['data-dir']);
    const store = await BrokerStore.open(dataDir, { create: false, store: parsed.values.store });
    try {
      // Brokers sharing a store keep its states: whether one runs here says nothing of the others.
      const running = store.shared || brokerRunning(dataDir);
      const now = Date.now();
      const roles = await store.roles.all();
      const certificates = await store.certificates.currentByAgent();
      const agents = (await store.agents.list({ includeRevoked: parsed.values.all })).map((row) => ({
        id: row.id,
        name: row.name,
        // Without a running broker nobody is connected, whatever the store last recorded.
        state: row.revokedAt !== null ? 'revoked' : running ? row.state : 'offline',
        version: row.version,
        labels: effectiveLabels(row),
        last_seen_unix_ms: row.lastSeenAt,
        certificate_not_after_unix_ms: row.certNotAfter,
        // Which CA issued it, and when: a renewal (every half to two thirds of its life, or a CA rotation step) shows here.
        certificate_ca_pin: certificates.get(row.id)?.caPin ?? null,
        certificate_issued_at_unix_ms: certificates.get(row.id)?.issuedAt ?? null,
        enrolled_at_unix_ms: row.enrolledAt,
        // Without the broker's index a proof cannot be checked here: a claim is approved or not (list_agents says proven).
        claims: statedClaims(row.hello?.facts ?? {}, AGENT_ROLES).map((claim) => ({
          role: claim.role,
          object: claim.object,
          approved: (roles.get(row.id) ?? []).some((g) => g.role === claim.role && (g.scope === ANY_SCOPE || g.scope === claim.object)),
        })),
      }));
      if (parsed.values.output === 'json') {
        io.stdout(`${JSON.stringify({ broker_running: running, agents }, null, 2)}\n`);
        return 0;
      }
      if (agents.length === 0) {
        io.stdout('No agents enrolled yet. Create a join token with: fleetmesh token create\n');
        return 0;
      }
      const rows = agents.map((a) => [
        a.name,
        a.state,
        a.version || '-',
        formatLabels(a.labels) || '-',
        a.state === 'online' ? 'now' : formatAgo(a.last_seen_unix_ms, now),
        formatUntil(a.certificate_not_after_unix_ms, now),
        a.certificate_issued_at_unix_ms === null ? '-' : formatAgo(a.certificate_issued_at_unix_ms, now),
        a.certificate_ca_pin === null ? '-' : a.certificate_ca_pin.slice(7, 19),
        a.claims.map((c) => `${c.role}:${c.object.slice(0, 12)}${c.approved ? '' : ' (not approved)'}`).join(', ') || '-',
        a.id,
      ]);
      io.stdout(`${formatTable(['NAME', 'STATE', 'VERSION', 'LABELS', 'LAST SEEN', 'CERT EXPIRES', 'CERT ISSUED', 'CA', 'CLAIMS', 'ID'], rows)}\n`);
      if (!running) io.stdout(`(the broker for ${dataDir} is not running: every agent shows offline)\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});

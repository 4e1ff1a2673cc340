import { resolve } from 'node:path';
import type { AuditRow } from '../../broker/store/audit-table.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { formatTable } from '../../shared/format/table.ts';
import { BROKER_DATA_DIR_FLAG, OUTPUT_FLAG } from '../../shared/options/common-flags.ts';
import { defineCommand } from '../command.ts';

/** Who a row is for: the identity, and for a person signed in through OAuth their subject, email and client. */
function who(row: AuditRow): string {
  const name = row.identity || `source ${row.source ?? '?'}`;
  const person = [row.email, row.subject && `sub ${row.subject}`, row.clientId && `client ${row.clientId}`].filter(Boolean);
  return person.length ? `${name} (${person.join(', ')})` : name;
}

export const auditCommand = defineCommand({
  spec: {
    name: 'audit',
    summary: 'Show the audit log: every call of level 1 or more, and every refusal, newest first.',
    usage: 'fleetmesh audit [--limit 50] [--identity NAME] [--refused] [--output text|json]',
    flags: {
      ...BROKER_DATA_DIR_FLAG,
      limit: { type: 'integer', description: 'how many rows', default: 50, min: 1, max: 100_000, placeholder: 'N', env: false },
      identity: { type: 'string', description: 'only the calls of this identity', placeholder: 'NAME', env: false },
      refused: {
        type: 'boolean',
        description: "only refusals: tools above the caller's level, missing grants or confirmation, refused bearer tokens",
        default: false,
        env: false,
      },
      ...OUTPUT_FLAG,
    },
  },
  async run(parsed, io) {
    const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
    try {
      const rows = await store.audit.recent({
        limit: parsed.values.limit,
        refused: parsed.values.refused,
        ...(parsed.values.identity ? { identity: parsed.values.identity } : {}),
      });
      if (parsed.values.output === 'json') {
        io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
        return 0;
      }
      if (rows.length === 0) {
        io.stdout(parsed.values.refused ? 'The audit log holds no refusals.\n' : 'The audit log is empty.\n');
        return 0;
      }
      if (parsed.values.refused) {
        const refusals = rows.map((r) => [new Date(r.startedAt).toISOString(), who(r), r.tool, r.errorCode ?? '-', r.reason ?? '-']);
        io.stdout(`${formatTable(['STARTED', 'IDENTITY OR SOURCE', 'TOOL', 'ERROR', 'REASON'], refusals)}\n`);
        return 0;
      }
      const table = rows.map((r) => [
        new Date(r.startedAt).toISOString(),
        who(r),
        r.tool,
        r.targets.join(',') || '-',
        r.outcome,
        r.errorCode ?? '-',
        r.durationMs === null ? '-' : `${r.durationMs}ms`,
        JSON.stringify(r.arguments),
        r.callId,
        r.approvedBy ?? '-',
        r.note ?? '-',
      ]);
      io.stdout(
        `${formatTable(['STARTED', 'IDENTITY', 'TOOL', 'TARGETS', 'OUTCOME', 'ERROR', 'DURATION', 'ARGUMENTS', 'CALL ID', 'APPROVED BY', 'NOTE'], table)}\n`,
      );
      return 0;
    } finally {
      await store.close();
    }
  },
});

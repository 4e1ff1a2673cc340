import { resolve } from 'node:path';
import { decideApproval } from '../../broker/calls/approvals/decide-approval.ts';
import type { ApprovalRow } from '../../broker/store/approvals-table.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { formatTable, formatUntil } from '../../shared/format/table.ts';
import type { FlagSpec } from '../../shared/options/command-line.ts';
import { BROKER_DATA_DIR_FLAG, OUTPUT_FLAG } from '../../shared/options/common-flags.ts';
import { type Command, defineCommand } from '../command.ts';
import { shellOperator } from '../shell-operator.ts';

/** The state of an approval as a person reads it. */
function stateOf(row: ApprovalRow, now: number): string {
  if (row.state === 'pending') return row.expiresAt > now ? `waiting, expires ${formatUntil(row.expiresAt)}` : 'expired';
  return row.decidedBy ? `${row.state} by ${row.decidedBy}` : row.state;
}

export const approvalsListCommand = defineCommand({
  spec: {
    name: 'approvals list',
    summary: "List the calls waiting for a second person's approval: caller, tool, exact targets and arguments.",
    usage: 'fleetmesh approvals list [--all] [--output text|json]',
    flags: {
      ...BROKER_DATA_DIR_FLAG,
      all: { type: 'boolean', description: 'also the approvals decided, expired or withdrawn (the latest 100)', default: false, env: false },
      ...OUTPUT_FLAG,
    },
  },
  async run(parsed, io) {
    const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
    try {
      const now = Date.now();
      const rows = await store.approvals.list({ pending: !parsed.values.all, limit: 100, now });
      if (parsed.values.output === 'json') {
        io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
        return 0;
      }
      if (rows.length === 0) {
        io.stdout(parsed.values.all ? 'No approvals yet.\n' : 'No call waits for approval.\n');
        return 0;
      }
      const table = rows.map((row) => [row.id, row.identity, row.tool, row.targets.join(',') || '-', JSON.stringify(row.arguments), stateOf(row, now)]);
      io.stdout(`${formatTable(['ID', 'CALLER', 'TOOL', 'TARGETS', 'ARGUMENTS', 'STATE'], table)}\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});

const DECIDE_FLAGS = {
  ...BROKER_DATA_DIR_FLAG,
  as: { type: 'string', description: 'who decides, for the audit (default: the operator at this shell, user@host)', placeholder: 'NAME', env: false },
  reason: { type: 'string', description: 'why, for the caller and the audit', placeholder: 'TEXT', env: false },
} as const satisfies Record<string, FlagSpec>;

function decideCommand(decision: 'approve' | 'deny'): Command<typeof DECIDE_FLAGS> {
  const verb = decision === 'approve' ? 'Approve' : 'Deny';
  return defineCommand({
    spec: {
      name: `approvals ${decision}`,
      summary: `${verb} a call waiting for a second person; it ${decision === 'approve' ? 'runs at once' : 'fails as forbidden, nothing changed'}.`,
      usage: `fleetmesh approvals ${decision} ID [--reason TEXT] [--as NAME]`,
      details:
        'The operator at the broker’s shell (who holds its data dir) may decide any call but one made as the name given with --as; an identity decides in the console, where its level must cover the call.',
      positionals: [{ name: 'ID', description: 'the approval id fleetmesh approvals list shows (ap-…)', required: true }],
      flags: DECIDE_FLAGS,
    },
    async run(parsed, io) {
      const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
      try {
        const decider = parsed.values.as ?? shellOperator().name;
        const row = await decideApproval(store, parsed.positionals[0] ?? '', decision, { name: decider }, parsed.values.reason);
        io.stdout(
          `${row.state} ${row.id}: ${row.tool} by ${row.identity} on ${row.targets.join(', ') || 'no host'} with ${JSON.stringify(row.arguments)} (decided by ${decider})\n`,
        );
        return 0;
      } finally {
        await store.close();
      }
    },
  });
}

export const approvalsApproveCommand = decideCommand('approve');
export const approvalsDenyCommand = decideCommand('deny');

import { describe, expect, it } from 'vitest';
import type { AuditRow } from '../../store/audit-table.ts';
import type { McpTaskRow } from '../../store/mcp-tasks-table.ts';
import { interruptedResult } from './interrupted-result.ts';

const task: McpTaskRow = {
  taskId: 't1',
  identityId: 'i1',
  tool: 'set_agent_labels',
  status: 'failed',
  statusMessage: 'broker b1 left the cluster (no heartbeat) before the task ended; last progress: 1 of 2 hosts answered (web-1: answered)',
  result: null,
  cancelRequested: false,
  auditId: 'c1',
  inputRequired: false,
  createdAt: 1,
  updatedAt: 2,
  ttlMs: 1000,
  expiresAt: 1002,
};

const audit: AuditRow = {
  seq: 1,
  callId: 'c1',
  startedAt: 1,
  finishedAt: 2,
  identity: 'ops',
  tool: 'set_agent_labels',
  action: 'agent.set_labels',
  level: 2,
  targets: ['web-1', 'web-10'],
  targetIds: [],
  arguments: {},
  outcome: 'interrupted',
  errorCode: null,
  durationMs: null,
  note: "broker b1 left the cluster (no heartbeat) before the call completed; web-10 answered ok after 9000 ms, past the call's 60000 ms deadline",
  source: null,
  reason: null,
  brokerId: 'b1',
  subject: null,
  email: null,
  clientId: null,
  approvedBy: null,
};

describe('interruptedResult', () => {
  it("gives each target what the audit recorded of it, and the rest of the audit's notes apart", () => {
    const result = interruptedResult(task, audit, 'markdown');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      error: { code: 'unavailable', message: task.statusMessage },
      audit: {
        call_id: 'c1',
        outcome: 'interrupted',
        targets: [
          { host: 'web-1', recorded: [] },
          { host: 'web-10', recorded: ["web-10 answered ok after 9000 ms, past the call's 60000 ms deadline"] },
        ],
        notes: ['broker b1 left the cluster (no heartbeat) before the call completed'],
      },
    });
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('- "web-1": no answer recorded') });
  });

  it('writes its text as JSON when the broker is asked for JSON', () => {
    const result = interruptedResult(task, audit, 'json');
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  });

  it('says a call without an audit row changed nothing', () => {
    const result = interruptedResult({ ...task, tool: 'agent_info', auditId: null }, undefined, 'markdown');
    expect(result.structuredContent).toMatchObject({ audit: null, error: { hint: 'agent_info changes nothing the audit records; call it again.' } });
  });
});

import type { CallToolResult } from '@modelcontextprotocol/server';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { AuditRow } from '../../store/audit-table.ts';
import type { McpTaskRow } from '../../store/mcp-tasks-table.ts';
import { failedOutcome, type TextFormat, toToolResult } from '../tool-result.ts';

/** What the audit log recorded of one target of an interrupted call. */
interface TargetRecord {
  host: string;
  recorded: string[];
}

/**
 * The result of a task whose broker stopped before it ended: nobody knows
 * how the call went, so it says what is known. The task's last progress (in
 * its status message) and, for a call of level 1 or more, the audit row: its
 * outcome, its targets, and what agents answered after the call gave up
 * (notes such as "web-1 answered ok after …", which a broker of the cluster
 * holding the agent adds). Built when asked for, so a late answer counts.
 */
export function interruptedResult(task: McpTaskRow, audit: AuditRow | undefined, format: TextFormat): CallToolResult {
  const notes = audit?.note ? audit.note.split('; ') : [];
  const targets: TargetRecord[] = (audit?.targets ?? []).map((host) => ({ host, recorded: notes.filter((note) => note.startsWith(`${host} `)) }));
  const general = notes.filter((note) => !targets.some((target) => target.recorded.includes(note)));
  const message = task.statusMessage ?? 'the broker running this task stopped before it ended';
  const failure = new FleetError('unavailable', message, {
    hint: audit
      ? `Whether ${task.tool} changed anything is not known: read the state of its targets before calling it again.`
      : `${task.tool} changes nothing the audit records; call it again.`,
  });
  const failed = failedOutcome(failure);
  const structured = { ...failed.structured, audit: audit ? { call_id: audit.callId, outcome: audit.outcome, targets, notes: general } : null };
  const lines = [`The task failed: ${message}.`, failure.hint];
  if (audit) {
    lines.push('', `What the audit log knows of each target (call ${audit.callId}, outcome ${audit.outcome}):`);
    // Host names come from the fleet: quoted, as data.
    for (const target of targets) lines.push(`- ${JSON.stringify(target.host)}: ${target.recorded.length ? target.recorded.join('; ') : 'no answer recorded'}`);
    for (const note of general) lines.push(`- ${note}`);
  }
  return toToolResult({ ...failed, structured, markdown: lines.join('\n') }, format);
}

import type { ErrorInfo } from '../../shared/errors/fleet-error.ts';
import type { RunResult } from './call-route.ts';

/** The most of a row's note the answers' declared fields may take: the row stays small whatever an agent answered. */
const MAX_NOTE_CHARS = 4000;

/** What the audit keeps of the hosts' answers to a call, beside the call's own arguments. */
export interface AnswerAudit {
  /** The fields the action declares (`Action.audits`) of each host that answered them, as `host: field=JSON`. */
  note: string | undefined;
  /** The hosts' own refusals (`forbidden` answers), each naming its host. */
  refusals: ErrorInfo[];
}

/**
 * What the audit keeps of how the hosts answered a call: what an agent says
 * it actually did, where its action declares fields for that (a command's
 * final argv, built on the host from the call's name and parameters), and the
 * refusals agents made themselves (a path outside the operator's globs, a
 * command above the caller's level), which no check of the broker saw.
 */
export function answerAudit(result: RunResult): AnswerAudit {
  const { structured, action } = result;
  const nodes = result.shape === 'node' ? [structured] : result.shape === 'envelope' ? ((structured.hosts as Record<string, unknown>[] | undefined) ?? []) : [];
  const errors = result.shape === 'broker' ? [] : ((structured.errors as ErrorInfo[] | undefined) ?? []);
  const fields = action.audits ?? [];
  const noted = nodes.flatMap((node) => {
    const kept = fields.filter((field) => node[field] !== undefined).map((field) => `${field}=${JSON.stringify(node[field])}`);
    return kept.length ? [`${String(node.host)}: ${kept.join(' ')}`] : [];
  });
  const note = noted.join('; ');
  return {
    note: note ? (note.length > MAX_NOTE_CHARS ? `${note.slice(0, MAX_NOTE_CHARS - 1)}…` : note) : undefined,
    refusals: errors.filter((error) => error.code === 'forbidden' && error.host !== undefined),
  };
}

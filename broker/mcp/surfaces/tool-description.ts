import type { Action } from '../../../shared/catalog/action.ts';
import { STILL_RUNNING_PROGRESS_MS } from '../request-progress.ts';

/** Marks a change that may wait long by design; the server's instructions (LONG_CALLS) say once what it means. */
export const LONG_MARK = 'Long.';

/** What the server's instructions say of the changes marked long: a caller giving a progressToken hears they still run. */
export const LONG_CALLS = `Changes marked ${LONG_MARK} may run past a minute: give a progressToken and they send progress at least every ${STILL_RUNNING_PROGRESS_MS / 1000} s, so a client that resets its timeout on progress keeps waiting.`;

/**
 * What a tool's description says: the action's own words and, for a change
 * that may wait long by design (it declares `waitsMs`), the mark the
 * instructions explain once, rather than the explanation in every such tool:
 * every tools/list pays for each word here.
 */
export function toolDescription(action: Action): string {
  if (!action.waitsMs || action.risk === 'read') return action.description;
  return `${action.description} ${LONG_MARK}`;
}

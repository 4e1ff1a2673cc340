import type { Action } from '../../../shared/catalog/action.ts';
import { STILL_RUNNING_PROGRESS_MS } from '../request-progress.ts';

/**
 * What a tool's description says: the action's own words and, for a change
 * that may wait long by design (it declares `waitsMs`), that a caller giving
 * a progressToken hears it still runs, so a client resetting its request
 * timeout on progress keeps waiting. Kept short: every tools/list pays it.
 */
export function toolDescription(action: Action): string {
  if (!action.waitsMs || action.risk === 'read') return action.description;
  return `${action.description} Long: sends progress every ${STILL_RUNNING_PROGRESS_MS / 1000} s to a progressToken.`;
}

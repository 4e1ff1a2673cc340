import type { Action, Level } from '../../../shared/catalog/action.ts';
import type { ToolGlobSet } from '../../auth/tool-filter.ts';

/** Which calls wait for a second identity's approval (`--approval-level`, `--approval-tools`), and for how long. */
export interface ApprovalRule {
  /** Calls of actions of this level and above; undefined for none by level. */
  level: Level | undefined;
  /** Calls of these tools, whatever their level. */
  tools: ToolGlobSet;
  /** How long a call waits for its approval before it ends as expired. */
  ttlMs: number;
}

export function needsApproval(rule: ApprovalRule | undefined, action: Pick<Action, 'id' | 'tool' | 'level'>): boolean {
  if (!rule) return false;
  return (rule.level !== undefined && action.level >= rule.level) || rule.tools.matches(action);
}

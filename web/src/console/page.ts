import type { CallTool, ToolAnswer } from '../call-tool.ts';
import type { CallStep, ConsoleApi, Me } from './console-api.ts';

/** What a page is given: the broker link, who signed in, and a way to run a change with confirmation. */
export interface PageContext {
  api: ConsoleApi;
  call: CallTool;
  me: Me;
  navigate(hash: string): void;
  /**
   * Runs a tool that changes something; a destructive one shows its targets
   * and asks first. `onStep` hears the broker's progress while it runs.
   * Resolves with its answer, or undefined when the person cancelled at the
   * confirmation.
   */
  act(tool: string, args: Record<string, unknown>, onStep?: (step: CallStep) => void): Promise<ToolAnswer | undefined>;
  /** Whether this identity may use a tool at all (the console hides what it may not). */
  may(tool: string): boolean;
}

/**
 * A page of one domain, in `pages/<domain>/<domain>-page.ts` exporting
 * `consolePage`: the console lists every one in its navigation, by rank.
 */
export interface DomainPage {
  /** Its address, `#/<path>`. */
  readonly path: string;
  readonly label: string;
  /** Where the navigation lists it among the domains' pages (its domain's rank). */
  readonly rank: number;
  open(context: PageContext): Page;
}

/** One screen of the console. */
export interface Page {
  readonly element: HTMLElement;
  /** Re-reads what the page shows; `uris` are the fleet:// resources that changed (none on first load). */
  refresh(uris: readonly string[]): Promise<void>;
  destroy?(): void;
}

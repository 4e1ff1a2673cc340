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
  /** Every domain's pages, by rank: a host's page links to those of one host, an object's to those of its type. */
  domainPages: readonly DomainPage[];
}

/**
 * A page of one domain, in `pages/<domain>/*-page.ts` exporting
 * `consolePage`. A page of the fleet is listed in the navigation by rank; a
 * page of one host is linked from that host's page as `#/<path>/HOST`; a page
 * of one object is linked from the index's page of an object of its type as
 * `#/<path>/HOST/NAME`.
 */
export interface DomainPage {
  /** Its address, `#/<path>`, and what follows it (`arg`, still URI-encoded) for a host's or an object's page. */
  readonly path: string;
  readonly label: string;
  /** Where the navigation, or the host's page, lists it among the domains' pages (its domain's rank). */
  readonly rank: number;
  /** What it shows: the fleet (the default), one host, or one object of `objectType`. */
  readonly of?: 'fleet' | 'host' | 'object';
  readonly objectType?: string;
  open(context: PageContext, arg: string): Page;
}

/** One screen of the console. */
export interface Page {
  readonly element: HTMLElement;
  /** Re-reads what the page shows; `uris` are the fleet:// resources that changed (none on first load). */
  refresh(uris: readonly string[]): Promise<void>;
  destroy?(): void;
}

/** The address of a domain's page of one host (`HOST`) or one object (`HOST`, `NAME`): each part encoded on its own. */
export function domainPageHref(page: DomainPage, ...parts: string[]): string {
  return `#/${page.path}/${parts.map(encodeURIComponent).join('/')}`;
}

/** The domain page of one object of a type (a container's configuration and logs), if a domain has one. */
export function ownPageOf(pages: readonly DomainPage[], type: string): DomainPage | undefined {
  return pages.find((page) => page.of === 'object' && page.objectType === type);
}

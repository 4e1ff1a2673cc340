import type { z } from 'zod';
import type { Action, ActionInput, ActionOutput } from '../catalog/action.ts';
import type { ErrorInfo } from '../errors/fleet-error.ts';

/**
 * What a domain adds to declarations made for the whole fleet, in
 * `<folder>/<folder>-parts.ts` exporting `<folder>Parts` (optional; `npm run gen`
 * lists each in `parts.gen.ts`). It lives apart from the domain's own
 * declaration because those fleet-wide declarations are themselves part of
 * domains: find and describe take any resource type, and the check-ups read
 * every domain's part of a host. A parts file imports nothing of another domain.
 */
export interface DomainParts {
  /** The types of the fleet index its broker half keeps (find, describe, grants, resources), by name. */
  readonly resourceTypes?: Readonly<Record<string, ResourceTypeDeclaration>>;
  /** Verifications a host's setup for its collector may skip, which fleet status and the doctor warn of. */
  readonly trust?: readonly TrustCheck[];
  /** Its part of a host's inventory (inventory_scan, inventory_export). */
  readonly inventory?: InventoryPart;
  /** Its checks of a host for the doctor (a failed unit, a reboot waited for), run on the agent through the host's own actions. */
  readonly doctor?: DoctorPart;
  /** Its rows in a host's `alerts` (a failed unit), beside the figures over their thresholds, found on the agent through the host's own actions. */
  readonly alerts?: AlertPart;
}

/** A call a person or model can make next, exactly: the tool and its arguments (the host is added where the host is known). */
export interface NextCall {
  tool: string;
  arguments: Record<string, string | number | boolean>;
}

/**
 * One row a domain adds to a host's `alerts`: a thing on the host that needs
 * attention now, not a figure over a threshold. Its name and words are fleet
 * text (a unit's name), rendered as data.
 */
export interface HostAlert {
  /** What the domain watches, in its own words (`failed_unit`): the row's `metric`. */
  kind: string;
  /** The thing it is about. */
  subject: string;
  state: 'warning' | 'critical';
  /** The thing's own word for its state. */
  detail: string;
  /** Since when it is in that state, when the host knows. */
  since_unix_ms: number | null;
  /** The calls that say why, first the one to make first. */
  next: NextCall[];
}

/** A domain's rows in `alerts`. */
export interface AlertPart {
  /**
   * Its alerts on one host. A host without the domain's collector gives none
   * (`ran` false); one whose collector did not answer names it in `failed`.
   */
  examine(host: CheckedHost): Promise<{ ran: boolean; alerts: HostAlert[]; failed?: string[] }>;
}

/** One finding of the doctor on a host: what it is about, what is wrong, and the call that helps. */
export interface HostFinding {
  check: string;
  severity: 'info' | 'warning' | 'critical';
  category: string;
  subject: string;
  message: string;
  action: string;
  /**
   * Also something that needs attention now, in the host's report (a failed
   * unit), with the call to run next; a finding without it is the doctor's alone.
   */
  attention?: NextCall;
}

/** A domain's checks in the doctor (and, for the findings that say so, the report). */
export interface DoctorPart {
  /** The names of its checks, listed in the doctor's `checks` when they ran. */
  readonly checks: readonly string[];
  /** The categories its findings use. */
  readonly categories: readonly string[];
  /**
   * Its findings on one host. A host without the domain's collector gives none
   * and no check ran (absent); one whose collector did not answer names it in `failed`.
   */
  examine(host: CheckedHost): Promise<{ ran: boolean; findings: HostFinding[]; failed?: string[] }>;
}

/** What an agent states of its host (its Hello facts). */
export type HostFacts = Readonly<Record<string, string | number | boolean>>;

/**
 * A verification a host's setup may skip, told by its facts: fleet status
 * lists the hosts that skip it, and the doctor warns of it on each.
 */
export interface TrustCheck {
  /** The doctor's name for the check. */
  readonly check: string;
  /** The category of the doctor's finding. */
  readonly category: string;
  /** Whether a host's facts say it skips the verification. */
  skipped(facts: HostFacts): boolean;
  /** What fleet status says of such a host. */
  readonly summary: string;
  /** The doctor's finding: what it is about, what is wrong, and what to do. */
  readonly subject: string;
  readonly message: string;
  readonly action: string;
}

/**
 * Where the name of a thing of a type is unique: `host` types live on one
 * agent's engine and are named `HOST/NAME` by grants and find, `fleet` types
 * are named alone.
 */
export type ResourceScope = 'host' | 'fleet';

/** A thing that shows another to grants: a service shows its tasks. */
export interface GrantRef {
  readonly type: string;
  readonly name: string;
}

/** One type of the fleet index: how grants name and show its things. */
export interface ResourceTypeDeclaration {
  readonly scope: ResourceScope;
  /** Where find lists the type among all of them: lower first. */
  readonly rank: number;
  /**
   * Grant kinds besides its own that can show a thing of the type: `host` for
   * a thing an agent reports (any grant on that agent's host shows it), or a
   * kind whose things hold it (a service grant shows its tasks). A `host` type
   * is always shown by its host's grant.
   */
  readonly shownBy?: readonly string[];
  /**
   * The things that show one, from its name alone, for where only a name is
   * known (a digest's related things): task `web.1` is shown by service `web`.
   */
  parentsOf?(name: string): readonly GrantRef[];
}

/** A host as a check-up reads it on the agent: its facts and collectors, and its own actions, run there. */
export interface CheckedHost {
  readonly facts: HostFacts;
  /** `absent`: nothing to collect on this host (not a failure). */
  readonly collectors: readonly { name: string; available: boolean; absent?: boolean }[];
  /** Runs one of the host's actions as a call from the broker would; a collector that cannot answer gives no payload, never a throw. */
  run<A extends Action>(action: A, params: ActionInput<A>): Promise<{ payload: ActionOutput<A> | null; errors: ErrorInfo[] }>;
}

/** What a part found of one host: its fields and counts, and the collectors that did not answer, with their first error. */
export interface InventoryScan {
  fields: Record<string, unknown>;
  counts?: Record<string, number | null>;
  failed?: string[];
  errors?: ErrorInfo[];
}

/** How a node of the fleet's graph is drawn. */
export type GraphShape = 'box' | 'round' | 'stadium' | 'hexagon' | 'slanted';

/**
 * What a part draws a host's part of the fleet's Mermaid graph with. Ids are
 * the part's own (a letter no other part uses, then numbers), never fleet text;
 * labels are fleet text, which the graph quotes.
 */
export interface GraphDraw {
  /** The id of the host's node. */
  readonly host: string;
  node(id: string, label: string, shape: GraphShape): void;
  edge(from: string, to: string, line: '-->' | '---', label?: string): void;
}

/** A domain's part of a host's inventory: its fields, how the agent finds them, and how the fleet's graph shows them. */
export interface InventoryPart {
  /** Its fields of each host's inventory (null where the host has none of it). */
  readonly shape: z.ZodRawShape;
  /** The counts of its lists: null when its collector did not answer. */
  readonly counts?: z.ZodRawShape;
  /** The columns of the fleet table it adds. */
  readonly columns?: readonly string[];
  /** Its fields of one host, from the host's facts and its own actions. */
  scan(host: CheckedHost): Promise<InventoryScan>;
  /** A drawer for one graph (it may keep what it drew, to draw a shared thing once), called with each host's answer in turn. */
  graph?(): (answer: Record<string, unknown>, draw: GraphDraw) => void;
}

import type { z } from 'zod';
import type { PartialView } from './partial-view.ts';

/** homebutler's classes: what an action may do to the machine it runs on. */
type Risk = 'read' | 'write' | 'destructive';
/** An MCP Apps widget, by the name a domain's broker half declares it under (web/src/widgets/ builds each). */
export type WidgetName = string;

/** Cetacean's operations levels: 0 read-only, 1 operational, 2 configuration, 3 impactful. */
export type Level = 0 | 1 | 2 | 3;
/**
 * Who answers: the agents (`host`, fan-out), the broker itself (`broker`), or
 * the name of the domain whose broker half routes it to one agent answering
 * for a shared object (`broker/domains/<domain>/`).
 */
type RunsOn = 'host' | 'broker' | (string & Record<never, never>);
/**
 * Which agent a domain's route sends an action to: any agent managing the
 * shared object (healthiest first, with failover), or the agent on the node
 * that runs the thing the action's resource parameter names (a task's
 * container lives on one engine).
 */
type AnsweredBy = 'manager' | 'task_node';

/**
 * One capability, declared once. The MCP surfaces, the `fleetmesh call` CLI, the
 * docs table and the agent dispatcher all read this declaration.
 */
export interface Action<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  /** Canonical `domain.action`. */
  readonly id: string;
  /** The tool name on the individual surface. */
  readonly tool: string;
  readonly risk: Risk;
  readonly level: Level;
  readonly runsOn: RunsOn;
  /** The agent collector serving it (`agent` for the agent's built-ins); null when the broker answers. */
  readonly collector: string | null;
  readonly title: string;
  /** Written for the model: when to use it, what comes back, what it costs. */
  readonly description: string;
  /** The parameters the action itself takes (targets and timeouts are added by the broker). */
  readonly input: I;
  /** The shape of one host's answer (or the broker's answer for broker actions). */
  readonly output: O;
  /** Repeating the call with the same arguments changes nothing more. */
  readonly idempotent: boolean;
  /** The action reaches beyond the fleet (registries, external APIs). */
  readonly openWorld: boolean;
  /** Grant-scoped resources the action names in its parameters or returns in its answer. */
  readonly resources?: ResourceScope;
  /**
   * For a read of a whole shared object: what it shows to an identity that may
   * see only part of it. Without one, such an identity gets the answer
   * unchanged (reads naming one resource are checked before they are sent).
   */
  readonly partialView?: PartialView;
  /**
   * The answer names things of the fleet index (by type, id or name, host):
   * the MCP result links each to its `fleet://` resource. `list` is the list
   * field holding them (absent: the answer is one thing); `more` adds each
   * thing's other resources (a service's logs, its Compose file).
   */
  readonly indexLinks?: { readonly list?: string; readonly more?: boolean };
  /** Parameters whose values never reach the audit log. */
  readonly sensitive?: readonly string[];
  /**
   * Fields of a host's answer the audit row keeps beside the call's arguments:
   * what the agent did, where that says more than the arguments (a named
   * command's final argv, which the host builds from its own declaration).
   */
  readonly audits?: readonly string[];
  /** How the Markdown text shows a fleet answer: the list to tabulate and its columns. */
  readonly table?: TableHint;
  /**
   * A view of the hosts' answers that a table cannot give (one graph of every
   * host), built from their checked answers; its text quotes every fleet string
   * itself. Undefined when the answers ask for none.
   */
  readonly view?: (hosts: readonly Record<string, unknown>[]) => { language: string; text: string } | undefined;
  /**
   * The MCP Apps widget that shows this action's answer (`ui://fleetmesh/<widget>`);
   * clients without the extension get the text and structured result alone.
   */
  readonly widget?: WidgetName;
  /** Other actions worth knowing about from this one (ids). */
  readonly related?: readonly string[];
  /**
   * How long the action itself may take by design, from its parsed parameters
   * (a stop's grace period, a convergence wait, a watch): the broker's deadline
   * covers it plus a margin, whatever shorter deadline the caller asked for.
   */
  waitsMs?(params: z.infer<I>): number;
  /** For actions of a domain's route: which agent answers (default: one that manages the shared object). */
  readonly answeredBy?: AnsweredBy;
  /** The action changes the labels that selectors match: a refusal of a selector matching nothing can offer it. */
  readonly setsLabels?: boolean;
  /**
   * A client may run the call as an MCP task (an id at once, status to poll,
   * cancel, the result later): work that converges or waits past a comfortable
   * request. A host action over many hosts may always run as one.
   */
  readonly longRunning?: boolean;
}

/** Whether a call of the action may run as an MCP task: long by declaration, or a fan-out over many hosts. */
export function runsAsTask(action: Action): boolean {
  return action.longRunning === true || action.runsOn === 'host';
}

/**
 * Resources of one kind an action touches. Names are host-scoped
 * (`web-1/nginx`) for kinds that live on a host, so grants such as
 * `container:web-1/nginx*` apply.
 */
interface ResourceScope {
  readonly kind: string;
  /** The parameter naming one resource (the `name` of a tool reading one container's logs). */
  readonly param?: string;
  /**
   * List fields of a host's answer whose items are resources, the item field
   * holding each name, and the field that counts the list. An identity sees
   * the items it may read, counted as such; one that may not read the host
   * itself sees nothing else of the answer (the host's OS, ports, node id…).
   */
  readonly lists?: readonly { field: string; name: string; count?: string }[];
  /** Fields of a host's answer that echo the call rather than describe the host (inventory_export's format): shown to all who see the lists. */
  readonly callFields?: readonly string[];
  /**
   * Without explicit targets, a call naming the resource goes to the host the
   * broker's index says holds it (a sandbox lives on one host).
   */
  readonly locate?: boolean;
}

export interface TableHint {
  /** A list field of each host's answer: its items become rows (with a host column). Absent: one row per host. */
  readonly list?: string;
  readonly columns: readonly string[];
  /** A field whose truthy rows come before the others (the hosts where something changed). */
  readonly first?: string;
  /**
   * The list runs oldest to newest and its end is what people read (a log): a
   * table that must cut keeps the last rows, and tells how to read the older ones.
   */
  readonly tail?: { readOlder: string };
  /**
   * What the answer's figures mean where their names cannot say it (which
   * whole a percentage is of, over what window): the text says it under the
   * table, for a model that reads only the text.
   */
  readonly legend?: string;
  /**
   * Figures whose unit the answer names in one of its fields (a series'
   * latest, min and max are percent for CPU, bytes for memory): the text
   * shows those columns in that unit.
   */
  readonly unit?: { readonly field: string; readonly columns: readonly string[] };
  /**
   * Lists of each host's answer that a fleet table can only count (findings,
   * changes, calls to make): the text spells each out under the table, a row
   * per item with its host and every field.
   */
  readonly details?: readonly string[];
  /** How to read the fields the table of a broker answer leaves out (describe one, a resource). */
  readonly more?: string;
}

export type ActionInput<A extends Action> = z.infer<A['input']>;
export type ActionOutput<A extends Action> = z.infer<A['output']>;

export function defineAction<I extends z.ZodObject, O extends z.ZodType>(
  action: Omit<Action<I, O>, 'idempotent' | 'openWorld'> & { idempotent?: boolean; openWorld?: boolean },
): Action<I, O> {
  return { idempotent: action.risk === 'read', openWorld: false, ...action };
}

/** The domain of an action id (`fleet.status` → `fleet`). */
export function domainOf(action: Pick<Action, 'id'>): string {
  return action.id.slice(0, action.id.indexOf('.'));
}

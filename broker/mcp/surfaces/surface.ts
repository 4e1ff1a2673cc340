import type { Icon } from '@modelcontextprotocol/server';
import { type Action, runsAsTask } from '../../../shared/catalog/action.ts';
import type { IconLinks } from '../icons/icon-links.ts';
import type { JsonSchema } from './tool-schemas.ts';

export type SurfaceName = 'individual' | 'meta' | 'dynamic';
export const SURFACE_NAMES: readonly SurfaceName[] = ['individual', 'meta', 'dynamic'];

/** A tool as tools/list advertises it. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  /** Its domain's icon (the product's for a tool of no one domain). */
  icons?: Icon[];
  /** Present when a call may run as an MCP task (the 2026-07-28 wire drops it). */
  execution?: { taskSupport: 'optional' };
  /** MCP Apps: the `ui://` widget that shows the tool's answer. */
  _meta?: Record<string, unknown>;
}

/** What a tool call on a surface comes to; an unknown tool or malformed call is thrown as a FleetError. */
export type Resolution =
  | { kind: 'action'; action: Action; args: Record<string, unknown> }
  /** Answered by the surface itself (find_action): structured result. */
  | { kind: 'local'; structured: Record<string, unknown> };

/**
 * A projection of the catalog as MCP tools. Every surface reaches every action
 * with the same parameters, rules and result; only the calling shape differs.
 */
export interface Surface {
  readonly name: SurfaceName;
  tools(visible: readonly Action[], icons: IconLinks): ToolDefinition[];
  resolve(tool: string, args: Record<string, unknown>, visible: readonly Action[]): Resolution;
  /** The tool that runs an action on this surface, and a call line to adapt. */
  toolFor(action: Action): string;
  callLine(action: Action): string;
}

/**
 * MCP's behaviour hints, stated where they differ from the spec's defaults
 * (readOnlyHint false, idempotentHint false, openWorldHint true), except
 * destructiveHint, which a tool that writes always states. The title is the
 * tool's own `title`; destructiveHint and idempotentHint only mean something
 * for a tool that writes.
 */
interface ToolAnnotations {
  readOnlyHint?: true;
  destructiveHint?: boolean;
  idempotentHint?: true;
  openWorldHint?: false;
}

/** The execution hint of a tool that runs any of these actions: a task when one of them may. */
export function executionOf(actions: readonly Action[]): Pick<ToolDefinition, 'execution'> {
  return actions.some(runsAsTask) ? { execution: { taskSupport: 'optional' } } : {};
}

export function annotationsOf(action: Action): ToolAnnotations {
  const world = action.openWorld ? {} : { openWorldHint: false as const };
  if (action.risk === 'read') return { readOnlyHint: true, ...world };
  return { destructiveHint: action.risk === 'destructive', ...(action.idempotent ? { idempotentHint: true as const } : {}), ...world };
}

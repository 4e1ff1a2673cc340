import type { Action } from '../../../shared/catalog/action.ts';
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
}

/** What a tool call on a surface comes to. */
export type Resolution =
  | { kind: 'action'; action: Action; args: Record<string, unknown> }
  /** Answered by the surface itself (find_action): structured result. */
  | { kind: 'local'; structured: Record<string, unknown> }
  | { kind: 'error'; code: 'not_found' | 'invalid_argument'; message: string; hint: string; details?: Record<string, unknown> };

/**
 * A projection of the catalog as MCP tools. Every surface reaches every action
 * with the same parameters, rules and result; only the calling shape differs.
 */
export interface Surface {
  readonly name: SurfaceName;
  tools(visible: readonly Action[]): ToolDefinition[];
  resolve(tool: string, args: Record<string, unknown>, visible: readonly Action[]): Resolution;
  /** The tool that runs an action on this surface, and a call line to adapt. */
  toolFor(action: Action): string;
  callLine(action: Action): string;
}

/**
 * MCP's behaviour hints. The title is the tool's own `title`; destructiveHint
 * and idempotentHint only mean something for a tool that writes, so a read-only
 * tool states readOnlyHint and openWorldHint alone.
 */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
}

export function annotationsOf(action: Action): ToolAnnotations {
  if (action.risk === 'read') return { readOnlyHint: true, openWorldHint: action.openWorld };
  return {
    readOnlyHint: false,
    destructiveHint: action.risk === 'destructive',
    idempotentHint: action.idempotent,
    openWorldHint: action.openWorld,
  };
}

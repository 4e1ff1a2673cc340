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
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
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

export function annotationsOf(action: Action): ToolDefinition['annotations'] {
  return {
    title: action.title,
    readOnlyHint: action.risk === 'read',
    destructiveHint: action.risk === 'destructive',
    idempotentHint: action.idempotent,
    openWorldHint: action.openWorld,
  };
}

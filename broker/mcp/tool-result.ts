import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/server';
import type { Action } from '../../shared/catalog/action.ts';
import { type FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import type { RunResult } from '../calls/call-route.ts';
import { renderMarkdown } from './render/markdown.ts';

/** How a result's text is written (--text-format): Markdown for a model to read, or the structured result as JSON. */
export type TextFormat = 'markdown' | 'json';

/**
 * Whatever a call came to at the MCP edge: the runner's result, an answer a
 * surface gave by itself (`local`: find_action's matches), or a failure in
 * its structured form (`error`).
 */
export interface ToolOutcome {
  structured: Record<string, unknown>;
  isError: boolean;
  shape: RunResult['shape'] | 'error' | 'local';
  /** The action that ran: its declaration shapes the text's tables. None for a failure or a local answer. */
  action?: Action;
  /** The Markdown, when whoever built the outcome knows more than the renderer (an interrupted task's account of each target). */
  markdown?: string;
}

/** The structured form of a failure: the error with its details, and for confirm_required the targets a confirmed call would hit. */
export function errorStructure(error: FleetError): Record<string, unknown> {
  const { targets, grpcCode: _grpc, ...details } = error.details ?? {};
  return { error: { ...error.toInfo(), ...details }, ...(targets ? { targets } : {}) };
}

/** Any thrown value as the outcome of a failed call: a FleetError as it is, anything else mapped by toFleetError. */
export function failedOutcome(error: unknown): ToolOutcome {
  return { structured: errorStructure(toFleetError(error)), isError: true, shape: 'error' };
}

/**
 * The one place an outcome becomes an MCP tool result: the structured result
 * always, its text in the broker's format, the links an answer carries, and
 * `isError` when it failed, so that a model reads what went wrong and what to
 * do instead of a JSON-RPC error (DESIGN §5).
 */
export function toToolResult(outcome: ToolOutcome, format: TextFormat, links: readonly ContentBlock[] = []): CallToolResult {
  const text =
    format === 'json' ? JSON.stringify(outcome.structured, null, 2) : (outcome.markdown ?? renderMarkdown(outcome.action, outcome.shape, outcome.structured));
  return {
    content: [{ type: 'text', text }, ...links],
    structuredContent: outcome.structured,
    ...(outcome.isError ? { isError: true } : {}),
  };
}

/** A thrown value as an MCP tool error. */
export function toToolError(error: unknown, format: TextFormat): CallToolResult {
  return toToolResult(failedOutcome(error), format);
}

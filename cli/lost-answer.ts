import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toToolError } from '../broker/mcp/tool-result.ts';
import { FleetError } from '../shared/errors/fleet-error.ts';

/**
 * What the relay answers for a tool call whose answer the broker never
 * delivered (its connection broke, or its stream ended first, as a broker
 * stops): an error result, as the broker words one, saying the call may have
 * run, so the client checks before it sends the call again.
 */
export function lostAnswer(tool: string): CallToolResult {
  const error = new FleetError('unavailable', `the broker's answer to ${tool} was lost (its connection ended first): whether it took effect is unknown`, {
    hint: `Read the state of its targets before calling ${tool} again; the relay has moved to a broker that answers.`,
    details: { outcome: 'unknown' },
  });
  const result = toToolError(error, 'markdown');
  // The relay speaks SDK 1.x, whose result type spells structuredContent as a record.
  return { ...result, structuredContent: result.structuredContent as Record<string, unknown> | undefined };
}

/**
 * How a component reaches the fleet: one tool call by name. The console calls
 * through its session with the broker, a widget through its MCP Apps host; both
 * end in the broker's runner, with the caller's level and grants.
 */
export type CallTool = (tool: string, args: Record<string, unknown>) => Promise<ToolAnswer>;

/** A tool's structured answer, or its error (confirm_required carries the targets). */
export interface ToolAnswer {
  structured?: Record<string, unknown>;
  error?: { code: string; message: string; hint: string };
  targets?: { host: string; resource?: string }[];
  is_error: boolean;
}

/** The structured answer, or the error as an exception to show. */
export async function callOrThrow(call: CallTool, tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const answer = await call(tool, args);
  if (answer.error) throw new Error(`${answer.error.message}${answer.error.hint ? ` — ${answer.error.hint}` : ''}`);
  return answer.structured ?? {};
}

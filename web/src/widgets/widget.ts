import type { CallTool, ToolAnswer } from '../call-tool.ts';

/** One MCP Apps widget: a component fed by a tool result, able to call tools back through its host. */
export interface Widget {
  readonly element: HTMLElement;
  /**
   * Shows a tool result; `input` is the call's arguments (to call again with a
   * change), `call` reaches tools through the host, `say` puts a message into
   * the conversation as the user's.
   */
  show(answer: ToolAnswer, context: WidgetContext): void;
}

export interface WidgetContext {
  call: CallTool;
  input: Record<string, unknown>;
  say(text: string): Promise<void>;
}

/**
 * A widget's side of the MCP Apps channel: JSON-RPC 2.0 over postMessage with
 * the host window that framed it. Only what the widgets use is spoken: the
 * `ui/initialize` handshake, the call's arguments and result the host sends,
 * `tools/call` back through the host, `ui/message` into the conversation and
 * `ui/notifications/size-changed`. Written here rather than taken from the
 * apps SDK because that package brings a whole MCP client and its schema
 * library with it, which made each widget document several hundred kilobytes.
 */

/** The apps protocol revision these widgets speak. */
export const APPS_PROTOCOL_VERSION = '2026-01-26';

interface RpcMessage {
  jsonrpc: '2.0';
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
}

export interface ToolResultParams {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

interface Handlers {
  /** The arguments of the call the widget shows. */
  toolInput(args: Record<string, unknown>): void;
  /** The result of that call (or of a later one the host hands over). */
  toolResult(result: ToolResultParams): void;
}

export class AppChannel {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly host: Window;

  constructor(
    private readonly appInfo: { name: string; version: string },
    private readonly handlers: Handlers,
    host: Window = window.parent,
  ) {
    this.host = host;
    window.addEventListener('message', (event) => {
      // Only the window that framed this document speaks for the host.
      if (event.source !== this.host) return;
      const message = event.data as RpcMessage | undefined;
      if (message?.jsonrpc !== '2.0') return;
      this.receive(message);
    });
  }

  /** The handshake: the host answers with its context, then hears that the widget is ready for the call's data. */
  async connect(): Promise<void> {
    await this.request('ui/initialize', { appInfo: this.appInfo, appCapabilities: {}, protocolVersion: APPS_PROTOCOL_VERSION });
    this.notify('ui/notifications/initialized', {});
  }

  /** A tool call through the host, which applies the caller's level and grants as any MCP call. */
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResultParams> {
    return this.request('tools/call', { name, arguments: args }) as Promise<ToolResultParams>;
  }

  /** Puts a message into the conversation as the user's (the host may ask before it sends). */
  async sendMessage(text: string): Promise<void> {
    await this.request('ui/message', { role: 'user', content: [{ type: 'text', text }] });
  }

  sizeChanged(width: number, height: number): void {
    this.notify('ui/notifications/size-changed', { width, height });
  }

  private request(method: string, params: Record<string, unknown>): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post({ jsonrpc: '2.0', id, method, params });
    });
  }

  private notify(method: string, params: Record<string, unknown>): void {
    this.post({ jsonrpc: '2.0', method, params });
  }

  private post(message: RpcMessage): void {
    this.host.postMessage(message, '*');
  }

  private receive(message: RpcMessage): void {
    if (message.method === undefined) {
      const waiting = typeof message.id === 'number' ? this.pending.get(message.id) : undefined;
      if (!waiting) return;
      this.pending.delete(message.id as number);
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
      return;
    }
    const params = message.params ?? {};
    if (message.method === 'ui/notifications/tool-input') this.handlers.toolInput((params.arguments ?? {}) as Record<string, unknown>);
    else if (message.method === 'ui/notifications/tool-result') this.handlers.toolResult(params as ToolResultParams);
    if (message.id === undefined) return;
    // Requests from the host: a teardown or a ping is answered with an empty result; nothing else is offered.
    if (message.method === 'ui/resource-teardown' || message.method === 'ping') this.post({ jsonrpc: '2.0', id: message.id, result: {} });
    else this.post({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `${message.method} is not offered by this widget` } });
  }
}

import type { AuthInfo } from '@modelcontextprotocol/server';
import type { McpSessionRow } from '../../store/mcp-sessions-table.ts';
import type { ExchangeResponse, SessionTransport } from '../http/session-transport.ts';

/** The JSON-RPC messages of an answer: a JSON body, or an event stream's `data:` lines. */
function answers(body: string): object[] {
  if (body.startsWith('{') || body.startsWith('[')) return [JSON.parse(body) as object].flat();
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as object);
}

/** An answer kept in memory: the replayed exchanges have no client to go to. */
class KeptAnswer implements ExchangeResponse {
  status = 0;
  text = '';
  readonly ended: Promise<void>;
  private finish: () => void = () => {};

  constructor() {
    this.ended = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  writeHead(status: number): void {
    this.status = status;
  }

  flushHeaders(): void {}

  write(chunk: string): void {
    this.text += chunk;
  }

  end(chunk?: string | Buffer): void {
    if (chunk) this.text += chunk.toString();
    this.finish();
  }

  once(): void {}
}

/**
 * Brings a fresh transport, already connected to a fresh server, to where a
 * stored session stood: the client's initialize is replayed (so the
 * transport takes the session's id, generated as that id, and the server
 * knows the client's info, capabilities and protocol version), then its
 * initialized notification and its last `logging/setLevel`. The answers go
 * nowhere: the client had them from the broker that served it before.
 * Rejects when the server refuses any of it.
 */
export async function replayHandshake(transport: SessionTransport, row: McpSessionRow, authInfo: AuthInfo): Promise<void> {
  const post = async (message: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const answer = new KeptAnswer();
    const request = { method: 'POST', headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers } };
    await transport.handle(request, answer, message, authInfo);
    await answer.ended;
    // A refusal is an HTTP error, or a JSON-RPC error in the answer's event stream.
    if (answer.status >= 300 || answers(answer.text).some((reply) => 'error' in reply)) {
      throw new Error(`the session's ${String(message.method)} was refused on replay: ${answer.text.slice(0, 300)}`);
    }
  };
  await post({
    jsonrpc: '2.0',
    id: 'resume-initialize',
    method: 'initialize',
    params: { protocolVersion: row.protocolVersion, capabilities: row.clientCapabilities, clientInfo: row.clientInfo },
  });
  const session = { 'mcp-session-id': row.sessionId };
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  if (row.logLevel !== null) await post({ jsonrpc: '2.0', id: 'resume-set-level', method: 'logging/setLevel', params: { level: row.logLevel } }, session);
}

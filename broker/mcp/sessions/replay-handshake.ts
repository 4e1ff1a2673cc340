import type { AuthInfo, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { McpSessionRow } from '../../store/mcp-sessions-table.ts';

/** The JSON-RPC messages of an event stream's `data:` lines. */
function answers(eventStream: string): object[] {
  return eventStream
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as object);
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
export async function replayHandshake(transport: WebStandardStreamableHTTPServerTransport, row: McpSessionRow, authInfo: AuthInfo): Promise<void> {
  const post = async (message: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const request = new Request('http://localhost/mcp', {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
      body: JSON.stringify(message),
    });
    const response = await transport.handleRequest(request, { authInfo, parsedBody: message });
    const text = await response.text();
    // A refusal is an HTTP error, or a JSON-RPC error in the answer's event stream.
    if (!response.ok || answers(text).some((answer) => 'error' in answer)) {
      throw new Error(`the session's ${String(message.method)} was refused on replay: ${text.slice(0, 300)}`);
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

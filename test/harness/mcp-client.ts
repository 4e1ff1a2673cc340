import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createIdentity } from '../../broker/auth/identities.ts';
import type { Broker } from '../../broker/broker.ts';
import type { Level } from '../../shared/catalog/action.ts';

let counter = 0;

/** A bearer token for a fresh identity on this broker. */
export async function identityToken(broker: Broker, level: Level, grants?: string[], name?: string): Promise<string> {
  counter += 1;
  return (await createIdentity(broker.store, { name: name ?? `test-${process.pid}-${counter}`, level, ...(grants ? { grants } : {}) })).token;
}

/** An SDK Client over Streamable HTTP to the broker, as a real MCP client connects. */
export async function mcpClient(broker: Broker, token: string): Promise<Client> {
  const client = new Client({ name: 'fleetmesh-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(broker.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  options: Parameters<Client['callTool']>[2] = {},
): Promise<CallToolResult & { structuredContent: Record<string, unknown> }> {
  return (await client.callTool({ name, arguments: args }, undefined, options)) as CallToolResult & { structuredContent: Record<string, unknown> };
}

export function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** A fleet:// resource read through the client, parsed. */
// biome-ignore lint/suspicious/noExplicitAny: a test reads whatever shape the resource has
export async function readJson(client: Client, uri: string): Promise<any> {
  const content = (await client.readResource({ uri })).contents[0];
  if (!content || !('text' in content)) throw new Error(`${uri} has no text content`);
  return JSON.parse(content.text);
}

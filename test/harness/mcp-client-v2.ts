import { type CallToolResult, Client, type ClientCapabilities, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Broker } from '../../broker/broker.ts';

/** The protocol revision a 2.x client pins to talk the stateless 2026-07-28 shape. */
export const MODERN_REVISION = '2026-07-28';

interface McpClientV2Options {
  /** `modern` pins 2026-07-28 (`server/discover`, per-request envelope); `legacy` runs the 2025 initialize handshake. */
  era?: 'modern' | 'legacy';
  capabilities?: ClientCapabilities;
}

/** A 2.x SDK Client over Streamable HTTP to the broker; by default on the 2026-07-28 revision. */
export async function mcpClientV2(broker: Broker, token: string, options: McpClientV2Options = {}): Promise<Client> {
  const era = options.era ?? 'modern';
  const client = new Client(
    { name: 'fleetmesh-test-v2', version: '2.0.0' },
    {
      ...(options.capabilities ? { capabilities: options.capabilities } : {}),
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_REVISION } } } : {}),
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(broker.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

export async function callV2(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  options: Parameters<Client['callTool']>[1] = {},
): Promise<CallToolResult & { structuredContent: Record<string, unknown> }> {
  return (await client.callTool({ name, arguments: args }, options)) as CallToolResult & { structuredContent: Record<string, unknown> };
}

/** A fleet:// resource read through a 2.x client, parsed. */
// biome-ignore lint/suspicious/noExplicitAny: a test reads whatever shape the resource has
export async function readJsonV2(client: Client, uri: string): Promise<any> {
  const content = (await client.readResource({ uri })).contents[0];
  if (!content || !('text' in content)) throw new Error(`${uri} has no text content`);
  return JSON.parse(content.text);
}

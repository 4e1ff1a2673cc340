import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FleetError } from '../shared/errors/fleet-error.ts';
import type { FlagSpec } from '../shared/options/command-line.ts';
import { FLEETMESH_VERSION } from '../shared/version.ts';

/** Flags of the commands that talk to a broker as an MCP client. */
export const MCP_CLIENT_FLAGS = {
  url: { type: 'string', description: "the broker's MCP endpoint", default: 'http://127.0.0.1:7400/mcp', placeholder: 'URL', env: 'FLEETMESH_MCP_URL' },
  token: { type: 'string', description: 'bearer token of an identity (fleetmesh identity create)', placeholder: 'TOKEN', env: 'FLEETMESH_MCP_TOKEN' },
  'token-file': {
    type: 'string',
    description: 'read the token from this file (npm start writes .fleetmesh/admin.token)',
    default: '.fleetmesh/admin.token',
    placeholder: 'FILE',
  },
} as const satisfies Record<string, FlagSpec>;

export function resolveToken(values: { token?: string | undefined; 'token-file': string }): string {
  if (values.token) return values.token;
  const file = resolve(values['token-file']);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  throw new FleetError('invalid_argument', 'no MCP token: pass --token (or FLEETMESH_MCP_TOKEN), or --token-file', {
    hint: 'fleetmesh identity create NAME --level N prints a token; npm start keeps one in .fleetmesh/admin.token.',
  });
}

/** An SDK client connected to a broker over Streamable HTTP with a bearer token. */
export async function connectToBroker(url: string, token: string, name: string): Promise<Client> {
  const client = new Client({ name, version: FLEETMESH_VERSION });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  try {
    await client.connect(transport);
  } catch (error) {
    const message = (error as Error).message;
    throw new FleetError('agent_offline', `cannot open an MCP session at ${url}: ${message}`, {
      hint: /401|Unauthorized/.test(message) ? 'The token was refused: check --token (fleetmesh identity list).' : 'Check --url and that the broker runs.',
    });
  }
  return client;
}

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { FleetError } from '../shared/errors/fleet-error.ts';
import type { FlagSpec } from '../shared/options/command-line.ts';
import { FLEETMESH_VERSION } from '../shared/version.ts';
import { owedAnswersFetch } from './owed-answers-fetch.ts';

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

/**
 * The SDK compiles every tool's output schema when it lists the tools, about a
 * second for the broker's catalog, though a command calls one tool: compile a
 * schema when its tool's answer is first checked instead.
 */
function lazySchemaValidator(): jsonSchemaValidator {
  let ajv: AjvJsonSchemaValidator | undefined;
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      let validate: JsonSchemaValidator<T> | undefined;
      return (input) => {
        ajv ??= new AjvJsonSchemaValidator();
        validate ??= ajv.getValidator<T>(schema);
        return validate(input);
      };
    },
  };
}

/** An SDK client connected to a broker over Streamable HTTP with a bearer token. */
export async function connectToBroker(url: string, token: string, name: string): Promise<Client> {
  const client = new Client({ name, version: FLEETMESH_VERSION }, { jsonSchemaValidator: lazySchemaValidator() });
  const transport: StreamableHTTPClientTransport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    // A request whose answer stream ends without its answer is answered at once, not left to its timeout.
    fetch: owedAnswersFetch((message) => transport.onmessage?.(message)),
  });
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

/**
 * Ends the client's MCP session on the broker (DELETE), then closes the
 * client: the SDK's close() alone leaves the session open there until it is
 * idle long enough, and it counts against the identity's sessions meanwhile.
 */
export async function closeSession(client: Client): Promise<void> {
  const transport = client.transport;
  if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => {});
  await client.close();
}

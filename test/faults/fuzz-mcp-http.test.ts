import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzRuns, fuzzTimeoutMs } from '../harness/fuzz-runs.ts';
import { call, identityToken, mcpClient } from '../harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from '../harness/test-fleet.ts';

const RUNS = fuzzRuns(200);
const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
];

/** A JSON-RPC message as a stranger may shape it: known methods or not, any params, any id. */
const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue()),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.jsonValue({ maxDepth: 1 })),
    method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 20 })),
    params: fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({ name: fc.constantFrom('list_agents', 'agent_info', 'set_agent_labels', 'nope'), arguments: fc.jsonValue({ maxDepth: 2 }) }),
      fc.record({ uri: fc.constantFrom('fleet://agents', 'fleet://status', 'fleet://agents/fuzz', 'file:///etc/passwd', '') }),
    ),
  },
  { requiredKeys: [] },
);

/** A body: one message, a batch, JSON of any shape, or bytes that are not JSON at all. */
const body = fc.oneof(
  message.map((m) => JSON.stringify(m)),
  fc.array(message, { maxLength: 3 }).map((batch) => JSON.stringify(batch)),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom('', '{', '[]', 'null', '{"jsonrpc":"2.0"}', '\u0000\u0001', '{"jsonrpc":"2.0","id":1,"method":"tools/call"}'),
);

/** Each JSON-RPC message in a response body: plain JSON, or the data lines of an event stream. */
function messagesIn(contentType: string, text: string): unknown[] {
  if (text.trim() === '') return [];
  if (contentType.includes('text/event-stream')) {
    return text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)));
  }
  const parsed = JSON.parse(text);
  return Array.isArray(parsed) ? parsed : [parsed];
}

function expectJsonRpcAnswer(answer: unknown): void {
  expect(answer).toMatchObject({ jsonrpc: '2.0' });
  const fields = answer as Record<string, unknown>;
  // A result, an error, or a request/notification the server sends on the stream.
  expect('result' in fields || 'error' in fields || 'method' in fields).toBe(true);
}

describe('fuzzed MCP HTTP bodies', () => {
  let fleet: TestFleet;
  let token: string;
  let sessionId: string;

  async function post(payload: string, withSession: boolean): Promise<Response> {
    return fetch(fleet.broker.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(withSession ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
      body: payload,
      signal: AbortSignal.timeout(30_000),
    });
  }

  beforeAll(async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('fuzz');
    token = await identityToken(fleet.broker, 3);
    const initialized = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
      }),
      false,
    );
    sessionId = initialized.headers.get('mcp-session-id') ?? '';
    await initialized.text();
    expect(sessionId).not.toBe('');
    await (await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), true)).text();
  });

  afterAll(async () => {
    await fleet?.stop();
  });

  it(
    'answers every body, in a session or not, with a JSON-RPC result or error (or an empty acceptance), and keeps serving',
    async () => {
      await fc.assert(
        fc.asyncProperty(body, fc.boolean(), async (payload, withSession) => {
          const response = await post(payload, withSession);
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          for (const answer of messagesIn(response.headers.get('content-type') ?? '', text)) expectJsonRpcAnswer(answer);
        }),
        { numRuns: RUNS },
      );
      // Still serving: a real client lists and calls.
      const client = await mcpClient(fleet.broker, token);
      try {
        const agents = await call(client, 'list_agents', {});
        expect(agents.isError).toBeFalsy();
      } finally {
        await client.close();
      }
    },
    fuzzTimeoutMs(RUNS, 1500),
  );
});

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SURFACE_NAMES } from '../../broker/mcp/surfaces/surface.ts';
import { fuzzRuns, fuzzTimeoutMs } from '../harness/fuzz-runs.ts';
import { call, identityToken, mcpClient } from '../harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from '../harness/test-fleet.ts';

const RUNS = fuzzRuns(100);

/** Durations a fuzzed call may ask for are kept short, so a case waits seconds at most (a long wait is a valid answer too). */
const DURATION_KEYS = new Set(['timeout_ms', 'watch_ms', 'interval_ms', 'duration_ms', 'since_ms', 'timeout_s']);

function tame(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([key, value]) => [key, DURATION_KEYS.has(key) && typeof value === 'number' && value > 1500 ? 1500 : value]),
  );
}

/** Arguments: the tool's own parameter names (and some others) with values of any JSON type. */
function argumentsFor(properties: string[]): fc.Arbitrary<Record<string, unknown>> {
  const key = fc.oneof(fc.constantFrom(...properties, 'host', 'hosts', 'selector', 'action', 'arguments', 'confirm'), fc.string({ maxLength: 12 }));
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom('*', 'all', 'fuzz-a', 'fuzz-b', 'role=web', '', 'x'.repeat(5000)),
    fc.integer(),
    fc.double(),
  );
  return fc.dictionary(key, value, { maxKeys: 6 }).map(tame);
}

/** A result with content (an error result or not); anything else fails the case. */
function expectCleanAnswer(result: Awaited<ReturnType<typeof call>>): void {
  expect(Array.isArray(result.content)).toBe(true);
  expect(result.isError === undefined || typeof result.isError === 'boolean').toBe(true);
}

describe.each(SURFACE_NAMES)('fuzzed tool arguments on the %s surface', (surface) => {
  let fleet: TestFleet;
  let client: Client;
  let tools: { name: string; properties: string[] }[];

  beforeAll(async () => {
    fleet = await startTestFleet({ toolSurface: surface });
    await fleet.addAgent('fuzz-a');
    await fleet.addAgent('fuzz-b');
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    tools = (await client.listTools()).tools.map((tool) => ({ name: tool.name, properties: Object.keys(tool.inputSchema.properties ?? {}) }));
  });

  afterAll(async () => {
    await client?.close();
    await fleet?.stop();
  });

  it(
    'answers every call with a result, an error result or a JSON-RPC error, and keeps serving',
    async () => {
      const toolCall = fc.oneof(
        fc.constantFrom(...tools).chain((tool) => fc.record({ name: fc.constant(tool.name), args: argumentsFor(tool.properties) })),
        fc.record({ name: fc.string({ maxLength: 40 }), args: argumentsFor([]) }),
      );
      await fc.assert(
        fc.asyncProperty(toolCall, async ({ name, args }) => {
          try {
            expectCleanAnswer(await call(client, name, args));
          } catch (error) {
            if (!(error instanceof McpError)) throw error;
          }
        }),
        { numRuns: RUNS },
      );
      // Still serving: MCP answers and the agents answer the broker.
      await client.ping();
      expect((await client.listTools()).tools.length).toBe(tools.length);
      const live = fleet.broker.registry.list().filter((host) => host.session);
      const outcomes = await fleet.broker.fanOut(live, { action: 'agent.info', params: {}, timeoutMs: 10_000, caller: 'fuzz' });
      expect(outcomes.every((o) => o.outcome.ok)).toBe(true);
    },
    fuzzTimeoutMs(RUNS, 2000),
  );
});

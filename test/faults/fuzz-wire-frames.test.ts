import { create } from '@bufbuild/protobuf';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentFrameSchema,
  type Call,
  ChunkSchema,
  ContainerSampleSchema,
  FactsSchema,
  HeartbeatSchema,
  HelloSchema,
  RenewRequestSchema,
  ReportSchema,
  ResultSchema,
  SampleSchema,
} from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { fuzzRuns, fuzzTimeoutMs } from '../harness/fuzz-runs.ts';
import { call, identityToken, mcpClient } from '../harness/mcp-client.ts';
import { type RogueAgent, startRogueAgent } from '../harness/rogue-agent.ts';
import { startTestFleet, type TestFleet } from '../harness/test-fleet.ts';
import { waitFor } from '../harness/wait.ts';

const RUNS = fuzzRuns(200);
const encoder = new TextEncoder();

const text = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', 'agent.info', 'docker.events', 'swarm.inventory', '{"a":1}', 'x'.repeat(4000)));
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  fc.jsonValue({ maxDepth: 4 }).map((value) => encoder.encode(JSON.stringify(value))),
  fc.constantFrom(encoder.encode('null'), encoder.encode('{"containers":[{"id":1}]}'), encoder.encode('[]')),
);
const number = fc.oneof(fc.double(), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -1, 0, 1e308));
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const uint32 = fc.nat({ max: 2 ** 32 - 1 });
const uint64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const labels = fc.dictionary(text, text, { maxKeys: 4 });

const sample = fc
  .record(
    {
      cpuPercent: number,
      memoryPercent: number,
      diskPercent: number,
      diskMount: text,
      containersRunning: uint32,
      containersTotal: uint32,
      load1: number,
      memoryUsedBytes: uint64,
      memoryTotalBytes: uint64,
      sampledUnixMs: int64,
      containers: fc.array(
        fc.record({ id: text, name: text, cpuPercent: number, memoryUsageBytes: uint64, service: text }).map((c) => create(ContainerSampleSchema, c)),
        { maxLength: 3 },
      ),
      netRxBytes: uint64,
    },
    { requiredKeys: [] },
  )
  .map((s) => create(SampleSchema, s));

const hello = fc
  .record(
    {
      agentVersion: text,
      protocolVersion: uint32,
      actions: fc.array(text, { maxLength: 5 }),
      collectors: fc.array(fc.record({ name: text, available: fc.boolean(), reason: text }), { maxLength: 3 }),
      labels,
      facts: fc
        .record(
          { hostname: text, os: text, cpuCores: uint32, memoryTotalBytes: uint64, swarmRole: text, swarmId: text, proxmoxNode: text },
          { requiredKeys: [] },
        )
        .map((facts) => create(FactsSchema, facts)),
      name: text,
      startedUnixMs: int64,
    },
    { requiredKeys: [] },
  )
  // agent.info stays offered, so the case's real call is sent whatever the Hello said.
  .map((h) => create(HelloSchema, { ...h, actions: [...(h.actions ?? []), 'agent.info'] }));

/** Any frame an agent may send, with any contents. */
const frame = fc.oneof(
  hello.map((value) => ({ case: 'hello' as const, value })),
  fc.record({ sentUnixMs: int64, sample }).map((h) => ({ case: 'heartbeat' as const, value: create(HeartbeatSchema, h) })),
  fc
    .record({
      callId: text,
      payloadJson: bytes,
      failedCollectors: fc.array(text, { maxLength: 3 }),
      errors: fc.array(fc.record({ code: text, message: text, hint: text, collector: text }), { maxLength: 3 }),
    })
    .map((r) => ({ case: 'result' as const, value: create(ResultSchema, r) })),
  fc.record({ callId: text, seq: uint32, payloadJson: bytes }).map((c) => ({ case: 'chunk' as const, value: create(ChunkSchema, c) })),
  fc.record({ csrPem: text }).map((r) => ({ case: 'renewRequest' as const, value: create(RenewRequestSchema, r) })),
  fc.record({ kind: text, payloadJson: bytes, observedUnixMs: int64 }).map((r) => ({ case: 'report' as const, value: create(ReportSchema, r) })),
);

/** An answer to a real call: any payload, any errors. */
const answer = fc.record({
  payloadJson: bytes,
  failedCollectors: fc.array(text, { maxLength: 2 }),
  errors: fc.array(fc.record({ code: fc.oneof(text, fc.constantFrom('not_found', 'internal')), message: text, hint: text, collector: text }), { maxLength: 2 }),
});

describe('fuzzed wire frames from a rogue agent', () => {
  let fleet: TestFleet;
  let client: Client;
  let rogue: RogueAgent;
  let rogues = 0;

  async function liveRogue(): Promise<RogueAgent> {
    const status = await Promise.race([rogue?.raw.status, Promise.resolve(undefined)]);
    if (rogue && status === undefined && fleet.broker.registry.find(rogue.name)?.session) return rogue;
    rogue?.close();
    rogues += 1;
    rogue = await startRogueAgent(fleet, `rogue-${rogues}`);
    return rogue;
  }

  beforeAll(async () => {
    fleet = await startTestFleet({ heartbeatIntervalMs: 60_000 });
    await fleet.addAgent('witness');
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    await liveRogue();
  });

  afterAll(async () => {
    rogue?.close();
    await client?.close();
    await fleet?.stop();
  });

  it(
    'takes any sequence of frames without crashing, and answers calls to the rogue with a result or an error result',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 6 }), answer, async (frames, reply) => {
          const agent = await liveRogue();
          for (const body of frames) agent.raw.stream.write(create(AgentFrameSchema, { frame: body }));
          // A real call, answered with whatever the case holds.
          const seen = agent.calls().length;
          const pending = call(client, 'agent_info', { host: agent.name, timeout_ms: 5000 });
          const sent = await waitFor(() => agent.calls()[seen] as Call | undefined, { what: 'the call to the rogue', timeoutMs: 5000 }).catch(() => undefined);
          if (sent)
            agent.raw.stream.write(create(AgentFrameSchema, { frame: { case: 'result', value: create(ResultSchema, { callId: sent.callId, ...reply }) } }));
          const result = await pending;
          expect(Array.isArray(result.content)).toBe(true);
        }),
        { numRuns: RUNS },
      );
      // Still serving: the well-behaved agent answers.
      const witness = fleet.broker.registry.find('witness');
      const [outcome] = await fleet.broker.fanOut(witness ? [witness] : [], { action: 'agent.info', params: {}, timeoutMs: 10_000, caller: 'fuzz' });
      expect(outcome?.outcome.ok).toBe(true);
    },
    fuzzTimeoutMs(RUNS, 2000),
  );
});

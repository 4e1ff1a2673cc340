import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { enrollAgent } from '../../agent/enrollment/enroll-agent.ts';
import { CATALOG } from '../../shared/catalog/catalog.ts';
import { AgentFrameSchema, type Call, FactsSchema, HeartbeatSchema, HelloSchema, ReportSchema, ResultSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { openRawStream, type RawStream } from './raw-stream.ts';
import type { TestFleet } from './test-fleet.ts';
import { waitFor } from './wait.ts';

export interface RogueHello {
  /** Hello facts, camelCase as the proto has them (swarmRole, swarmId, swarmNodeId, proxmoxCluster…). */
  facts?: Record<string, string | number | boolean>;
  collectors?: string[];
  labels?: Record<string, string>;
}

/**
 * An enrolled agent that speaks the raw protocol: it says what a test tells it
 * to, and answers nothing unless told. It beats like a live agent (the broker
 * ends the stream of one that falls silent).
 */
export interface RogueAgent {
  name: string;
  agentId: string;
  raw: RawStream;
  /** Every Call frame the broker sent it. */
  calls(): Call[];
  report(kind: string, payload: unknown, observedUnixMs?: number): void;
  answer(callId: string, payload: unknown): void;
  close(): void;
}

const encoder = new TextEncoder();
/** Under the test brokers' 200 ms heartbeat interval. */
const HEARTBEAT_MS = 100;

/** Enrolls `name` with a real join token and connects it with the given Hello. */
export async function startRogueAgent(fleet: TestFleet, name: string, hello: RogueHello = {}, presetToken?: string): Promise<RogueAgent> {
  const token = presetToken ?? (await fleet.token());
  const identity = await enrollAgent({ brokerAddress: fleet.address, token, caPin: fleet.pin, name, dataDir: join(fleet.root, 'rogues', name) });
  const raw = openRawStream(fleet.address, identity, { hello: false });
  const send = (frame: Parameters<typeof create<typeof AgentFrameSchema>>[1]) => raw.stream.write(create(AgentFrameSchema, frame));
  send({
    frame: {
      case: 'hello',
      value: create(HelloSchema, {
        agentVersion: 'rogue',
        protocolVersion: PROTOCOL_VERSION,
        actions: CATALOG.map((a) => a.id),
        collectors: (hello.collectors ?? []).map((collector) => ({ name: collector, available: true, reason: '' })),
        labels: hello.labels ?? {},
        facts: create(FactsSchema, hello.facts ?? {}),
        name,
        startedUnixMs: BigInt(Date.now()),
      }),
    },
  });
  await waitFor(() => raw.frames.some((f) => f.frame.case === 'welcome'), { what: `the welcome of ${name}` });
  const beat = setInterval(() => send({ frame: { case: 'heartbeat', value: create(HeartbeatSchema, { sentUnixMs: BigInt(Date.now()) }) } }), HEARTBEAT_MS);
  beat.unref();
  return {
    name,
    agentId: identity.agentId,
    raw,
    calls: () => raw.frames.filter((f) => f.frame.case === 'call').map((f) => f.frame.value as Call),
    report: (kind, payload, observedUnixMs = Date.now()) =>
      send({
        frame: {
          case: 'report',
          value: create(ReportSchema, { kind, payloadJson: encoder.encode(JSON.stringify(payload)), observedUnixMs: BigInt(observedUnixMs) }),
        },
      }),
    answer: (callId, payload) =>
      send({ frame: { case: 'result', value: create(ResultSchema, { callId, payloadJson: encoder.encode(JSON.stringify(payload)) }) } }),
    close: () => {
      clearInterval(beat);
      raw.close();
    },
  };
}

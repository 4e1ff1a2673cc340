import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AgentFrame,
  AgentFrameSchema,
  CallErrorSchema,
  ChunkSchema,
  ContainerSampleSchema,
  HeartbeatSchema,
  HelloSchema,
  ReportSchema,
  ResultSchema,
  SampleSchema,
} from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { fuzzRuns, fuzzTimeoutMs } from '../../test/harness/fuzz-runs.ts';
import { decodeAgentFrame, decodeByHand } from './agent-frames.ts';

/** Figures as agents send them (small), now and then any 64-bit value. */
const small = fc.oneof(
  { arbitrary: fc.bigInt({ min: 0n, max: 2n ** 49n - 1n }), weight: 4 },
  { arbitrary: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), weight: 1 },
);
const signed = fc.oneof(
  { arbitrary: fc.bigInt({ min: 0n, max: 2n ** 49n - 1n }), weight: 4 },
  { arbitrary: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), weight: 1 },
);
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', '\uFEFFboom', 'ü€𝄞'));
const uint32 = fc.integer({ min: 0, max: 0xffffffff });
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
/** An init without the keys whose value is undefined: an optional field left out, as an agent leaves it. */
const defined = (init: Record<string, unknown>) => Object.fromEntries(Object.entries(init).filter(([, value]) => value !== undefined));

const containerSample = fc
  .record({
    id: text,
    name: text,
    cpuPercent: optional(fc.double()),
    memoryUsageBytes: optional(small),
    netRxBytes: optional(small),
    netTxBytes: optional(small),
    service: text,
  })
  .map((init) => create(ContainerSampleSchema, defined(init)));
const sample = fc
  .record({
    cpuPercent: optional(fc.double()),
    memoryPercent: optional(fc.double()),
    diskPercent: optional(fc.double()),
    diskMount: text,
    containersRunning: optional(uint32),
    containersTotal: optional(uint32),
    load1: optional(fc.double()),
    memoryUsedBytes: small,
    memoryTotalBytes: small,
    sampledUnixMs: signed,
    containers: fc.array(containerSample, { maxLength: 4 }),
    netRxBytes: optional(small),
    netTxBytes: optional(small),
  })
  .map((init) => create(SampleSchema, defined(init)));
const heartbeat = fc.record({ sentUnixMs: signed, sample: optional(sample) }).map((init) => create(HeartbeatSchema, defined(init)));
const callError = fc.record({ code: text, message: text, hint: text, collector: text }).map((init) => create(CallErrorSchema, init));
const result = fc
  .record({
    callId: text,
    payloadJson: fc.uint8Array({ maxLength: 64 }),
    failedCollectors: fc.array(text, { maxLength: 3 }),
    errors: fc.array(callError, { maxLength: 3 }),
    absentCollectors: fc.array(text, { maxLength: 3 }),
  })
  .map((init) => create(ResultSchema, init));
const chunk = fc.record({ callId: text, seq: uint32, payloadJson: fc.uint8Array({ maxLength: 64 }) }).map((init) => create(ChunkSchema, init));
const report = fc.record({ kind: text, payloadJson: fc.uint8Array({ maxLength: 64 }), observedUnixMs: signed }).map((init) => create(ReportSchema, init));
const frame = fc.oneof(
  heartbeat.map((value) => create(AgentFrameSchema, { frame: { case: 'heartbeat', value } })),
  result.map((value) => create(AgentFrameSchema, { frame: { case: 'result', value } })),
  chunk.map((value) => create(AgentFrameSchema, { frame: { case: 'chunk', value } })),
  report.map((value) => create(AgentFrameSchema, { frame: { case: 'report', value } })),
);

const encoded = (message: AgentFrame) => Buffer.from(toBinary(AgentFrameSchema, message));

/** What protobuf-es makes of the bytes, or the error it throws. */
function reference(bytes: Buffer): { frame: AgentFrame } | { error: string } {
  try {
    return { frame: fromBinary(AgentFrameSchema, bytes) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function decoded(bytes: Buffer): { frame: AgentFrame } | { error: string } {
  try {
    return { frame: decodeAgentFrame(bytes) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const RUNS = fuzzRuns(2000);

describe('decodeAgentFrame', () => {
  it(
    'builds the objects protobuf-es builds, for every heartbeat, result, chunk and report',
    () => {
      fc.assert(
        fc.property(frame, (message) => {
          const bytes = encoded(message);
          expect(decodeAgentFrame(bytes)).toStrictEqual(fromBinary(AgentFrameSchema, bytes));
        }),
        { numRuns: RUNS },
      );
    },
    fuzzTimeoutMs(RUNS, 5),
  );

  it('reads the frames agents send by hand, not through protobuf-es', () => {
    const containers = Array.from({ length: 10 }, (_, c) =>
      create(ContainerSampleSchema, {
        id: 'f'.repeat(64),
        name: `app-${c}`,
        cpuPercent: 0.5 + c,
        memoryUsageBytes: 50_000_000n,
        netRxBytes: 1n,
        netTxBytes: 2n,
      }),
    );
    const frames = [
      create(AgentFrameSchema, {
        frame: {
          case: 'heartbeat',
          value: create(HeartbeatSchema, {
            sentUnixMs: BigInt(Date.now()),
            sample: create(SampleSchema, {
              cpuPercent: 12.5,
              diskMount: '/',
              containersRunning: 10,
              memoryTotalBytes: 8_200_000_000n,
              sampledUnixMs: BigInt(Date.now()),
              containers,
            }),
          }),
        },
      }),
      create(AgentFrameSchema, {
        frame: { case: 'result', value: create(ResultSchema, { callId: 'c1', payloadJson: Buffer.from('{"ok":true}'), failedCollectors: ['docker'] }) },
      }),
      create(AgentFrameSchema, { frame: { case: 'chunk', value: create(ChunkSchema, { callId: 'c1', seq: 3, payloadJson: Buffer.from('"line"') }) } }),
      create(AgentFrameSchema, {
        frame: { case: 'report', value: create(ReportSchema, { kind: 'inventory', payloadJson: Buffer.from('[]'), observedUnixMs: 5n }) },
      }),
    ];
    for (const message of frames) {
      const bytes = encoded(message);
      expect(decodeByHand(bytes), message.frame.case).toStrictEqual(fromBinary(AgentFrameSchema, bytes));
    }
    const { frame } = decodeAgentFrame(encoded(frames[1] as AgentFrame));
    // Bytes stay a view of the frame, as protobuf-es leaves them.
    expect(frame.case === 'result' && Buffer.from(frame.value.payloadJson).toString()).toBe('{"ok":true}');
  });

  it('leaves to protobuf-es what it does not read itself, with the same answer', () => {
    const hello = encoded(create(AgentFrameSchema, { frame: { case: 'hello', value: create(HelloSchema, { agentVersion: '1.0.0', actions: ['a'] }) } }));
    const beat = encoded(
      create(AgentFrameSchema, {
        frame: { case: 'heartbeat', value: create(HeartbeatSchema, { sentUnixMs: 7n, sample: create(SampleSchema, { cpuPercent: 1 }) }) },
      }),
    );
    const resultBytes = encoded(create(AgentFrameSchema, { frame: { case: 'result', value: create(ResultSchema, { callId: 'x' }) } }));
    const cases: Record<string, Buffer> = {
      hello,
      // A newer agent's field 15 (varint 1) after the frame.
      'an unknown field': Buffer.concat([resultBytes, Buffer.from([0x78, 0x01])]),
      // The same message field twice: protobuf merges the two.
      'a frame sent twice in one': Buffer.concat([beat, beat]),
      'a negative timestamp': encoded(create(AgentFrameSchema, { frame: { case: 'heartbeat', value: create(HeartbeatSchema, { sentUnixMs: -1n }) } })),
      'a leading byte order mark': encoded(create(AgentFrameSchema, { frame: { case: 'result', value: create(ResultSchema, { callId: '\uFEFFx' }) } })),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      expect(decodeByHand(bytes), name).toBeUndefined();
      expect(decoded(bytes), name).toStrictEqual(reference(bytes));
    }
    expect(decodeAgentFrame(cases['an unknown field'] as Buffer).$unknown).toHaveLength(1);
  });

  it('fails where protobuf-es fails: truncated frames and strings that are not UTF-8', () => {
    const bytes = encoded(
      create(AgentFrameSchema, { frame: { case: 'result', value: create(ResultSchema, { callId: 'abc', payloadJson: Buffer.from('{}') }) } }),
    );
    for (let cut = 1; cut < bytes.length; cut++) {
      const truncated = bytes.subarray(0, cut);
      expect(decoded(truncated), `cut at ${cut}`).toStrictEqual(reference(truncated));
    }
    const invalid = Buffer.from(bytes);
    invalid[invalid.indexOf('abc') + 1] = 0xff;
    expect(decoded(invalid)).toStrictEqual(reference(invalid));
    expect('error' in reference(invalid)).toBe(true);
  });

  it(
    'answers any bytes as protobuf-es does',
    () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.uint8Array({ maxLength: 48 }),
            frame.map(encoded).chain((bytes) =>
              fc.integer({ min: 0, max: bytes.length - 1 }).map((i) => {
                const copy = Buffer.from(bytes);
                copy[i] = (copy[i] as number) ^ 0x5a;
                return copy;
              }),
            ),
          ),
          (raw) => {
            const bytes = Buffer.from(raw);
            expect(decoded(bytes)).toStrictEqual(reference(bytes));
          },
        ),
        { numRuns: RUNS },
      );
    },
    fuzzTimeoutMs(RUNS, 5),
  );
});

import { isUtf8 } from 'node:buffer';
import { fromBinary } from '@bufbuild/protobuf';
import {
  type AgentFrame,
  AgentFrameSchema,
  type CallError,
  type Chunk,
  type ContainerSample,
  type Heartbeat,
  type Report,
  type Result,
  type Sample,
} from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';

/**
 * Decodes the AgentFrames that arrive by the thousand (heartbeats, results,
 * chunks, reports) without protobuf-es's reflection: at 10,000 agents its
 * `fromBinary` was a sixth to a third of the broker's held loop
 * (docs/performance.md). The objects built are the ones `fromBinary` builds,
 * field for field (agent-frames.test.ts compares the two on random frames).
 *
 * Anything else goes to `fromBinary` whole, so its answer (or its error) is
 * always the one given: another kind of frame (Hello, RenewRequest), a field
 * this file does not know (a newer agent's), a field met twice where protobuf
 * merges, a wire type other than the schema's, a 64-bit figure too large for
 * a double, malformed or truncated bytes.
 */
export function decodeAgentFrame(bytes: Uint8Array): AgentFrame {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return decodeByHand(buf) ?? fromBinary(AgentFrameSchema, buf);
}

/** The frame read by this file's code, or undefined where it leaves the frame to `fromBinary`. */
export function decodeByHand(buf: Buffer): AgentFrame | undefined {
  try {
    return readAgentFrame(new Reader(buf));
  } catch (error) {
    if (error !== GIVE_UP) throw error;
    return undefined;
  }
}

/** Thrown by the reader at whatever it leaves to `fromBinary`. */
const GIVE_UP = Symbol('give up');

const VARINT = 0;
const I64 = 1;
const LEN = 2;

class Reader {
  pos = 0;
  end: number;

  constructor(readonly buf: Buffer) {
    this.end = buf.length;
  }

  /** An unsigned varint of up to 7 bytes (49 bits, exact in a double); longer ones are left to `fromBinary`. */
  varint(): number {
    const { buf } = this;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) throw GIVE_UP;
      const byte = buf[this.pos++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    throw GIVE_UP;
  }

  /** A tag: field number × 8 + wire type. */
  tag(): number {
    return this.varint();
  }

  /** The end of a length-delimited field's bytes, checked against the message's end. */
  length(): number {
    const length = this.varint();
    const end = this.pos + length;
    if (end > this.end) throw GIVE_UP;
    return end;
  }

  bytes(): Buffer {
    const end = this.length();
    const start = this.pos;
    this.pos = end;
    return this.buf.subarray(start, end);
  }

  string(): string {
    const end = this.length();
    const start = this.pos;
    this.pos = end;
    if (end === start) return '';
    const { buf } = this;
    // protobuf-es refuses invalid UTF-8 in proto3 strings (its error is the one thrown), and its TextDecoder drops a
    // leading byte order mark.
    if (!isUtf8(buf.subarray(start, end)) || (buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf)) throw GIVE_UP;
    return buf.toString('utf8', start, end);
  }

  double(): number {
    if (this.pos + 8 > this.end) throw GIVE_UP;
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  uint32(): number {
    const value = this.varint();
    // protobuf-es keeps the low 32 bits.
    return value > 0xffffffff ? value % 2 ** 32 : value;
  }

  /** Reads the fields of a message nested in this one: `read` is called for each tag until its end. */
  nested(read: (tag: number) => void): void {
    const end = this.length();
    const outer = this.end;
    this.end = end;
    while (this.pos < end) read(this.tag());
    this.end = outer;
  }
}

/** The wire type a field must come with; any other is left to `fromBinary`. */
function expect(tag: number, wireType: number): void {
  if ((tag & 7) !== wireType) throw GIVE_UP;
}

function readAgentFrame(r: Reader): AgentFrame {
  let frame: AgentFrame['frame'] = { case: undefined };
  while (r.pos < r.end) {
    const tag = r.tag();
    // A frame's one field comes once: a second (protobuf merges a repeated message) is fromBinary's to read.
    if (frame.case !== undefined) throw GIVE_UP;
    expect(tag, LEN);
    switch (tag >>> 3) {
      case 2:
        frame = { case: 'heartbeat', value: readHeartbeat(r) };
        break;
      case 3:
        frame = { case: 'result', value: readResult(r) };
        break;
      case 4:
        frame = { case: 'chunk', value: readChunk(r) };
        break;
      case 6:
        frame = { case: 'report', value: readReport(r) };
        break;
      default:
        throw GIVE_UP;
    }
  }
  return { $typeName: 'fleetmesh.v1.AgentFrame', frame };
}

function readHeartbeat(r: Reader): Heartbeat {
  const heartbeat: Heartbeat = { $typeName: 'fleetmesh.v1.Heartbeat', sentUnixMs: 0n };
  r.nested((tag) => {
    switch (tag) {
      case (1 << 3) | VARINT:
        heartbeat.sentUnixMs = BigInt(r.varint());
        return;
      case (2 << 3) | LEN:
        if (heartbeat.sample) throw GIVE_UP;
        heartbeat.sample = readSample(r);
        return;
      default:
        throw GIVE_UP;
    }
  });
  return heartbeat;
}

function readSample(r: Reader): Sample {
  const sample: Sample = {
    $typeName: 'fleetmesh.v1.Sample',
    diskMount: '',
    memoryUsedBytes: 0n,
    memoryTotalBytes: 0n,
    sampledUnixMs: 0n,
    containers: [],
  };
  r.nested((tag) => {
    switch (tag) {
      case (1 << 3) | I64:
        sample.cpuPercent = r.double();
        return;
      case (2 << 3) | I64:
        sample.memoryPercent = r.double();
        return;
      case (3 << 3) | I64:
        sample.diskPercent = r.double();
        return;
      case (4 << 3) | LEN:
        sample.diskMount = r.string();
        return;
      case (5 << 3) | VARINT:
        sample.containersRunning = r.uint32();
        return;
      case (6 << 3) | VARINT:
        sample.containersTotal = r.uint32();
        return;
      case (7 << 3) | I64:
        sample.load1 = r.double();
        return;
      case (8 << 3) | VARINT:
        sample.memoryUsedBytes = BigInt(r.varint());
        return;
      case (9 << 3) | VARINT:
        sample.memoryTotalBytes = BigInt(r.varint());
        return;
      case (10 << 3) | VARINT:
        sample.sampledUnixMs = BigInt(r.varint());
        return;
      case (11 << 3) | LEN:
        sample.containers.push(readContainerSample(r));
        return;
      case (12 << 3) | VARINT:
        sample.netRxBytes = BigInt(r.varint());
        return;
      case (13 << 3) | VARINT:
        sample.netTxBytes = BigInt(r.varint());
        return;
      default:
        throw GIVE_UP;
    }
  });
  return sample;
}

function readContainerSample(r: Reader): ContainerSample {
  const container: ContainerSample = { $typeName: 'fleetmesh.v1.ContainerSample', id: '', name: '', service: '' };
  r.nested((tag) => {
    switch (tag) {
      case (1 << 3) | LEN:
        container.id = r.string();
        return;
      case (2 << 3) | LEN:
        container.name = r.string();
        return;
      case (3 << 3) | I64:
        container.cpuPercent = r.double();
        return;
      case (4 << 3) | VARINT:
        container.memoryUsageBytes = BigInt(r.varint());
        return;
      case (5 << 3) | VARINT:
        container.netRxBytes = BigInt(r.varint());
        return;
      case (6 << 3) | VARINT:
        container.netTxBytes = BigInt(r.varint());
        return;
      case (7 << 3) | LEN:
        container.service = r.string();
        return;
      default:
        throw GIVE_UP;
    }
  });
  return container;
}

function readResult(r: Reader): Result {
  const result: Result = {
    $typeName: 'fleetmesh.v1.Result',
    callId: '',
    payloadJson: new Uint8Array(0),
    failedCollectors: [],
    errors: [],
    absentCollectors: [],
  };
  r.nested((tag) => {
    switch (tag) {
      case (1 << 3) | LEN:
        result.callId = r.string();
        return;
      case (2 << 3) | LEN:
        result.payloadJson = r.bytes();
        return;
      case (3 << 3) | LEN:
        result.failedCollectors.push(r.string());
        return;
      case (4 << 3) | LEN:
        result.errors.push(readCallError(r));
        return;
      case (5 << 3) | LEN:
        result.absentCollectors.push(r.string());
        return;
      default:
        throw GIVE_UP;
    }
  });
  return result;
}

function readCallError(r: Reader): CallError {
  const error: CallError = { $typeName: 'fleetmesh.v1.CallError', code: '', message: '', hint: '', collector: '' };
  r.nested((tag) => {
    if ((tag & 7) !== LEN) throw GIVE_UP;
    switch (tag >>> 3) {
      case 1:
        error.code = r.string();
        return;
      case 2:
        error.message = r.string();
        return;
      case 3:
        error.hint = r.string();
        return;
      case 4:
        error.collector = r.string();
        return;
      default:
        throw GIVE_UP;
    }
  });
  return error;
}

function readChunk(r: Reader): Chunk {
  const chunk: Chunk = { $typeName: 'fleetmesh.v1.Chunk', callId: '', seq: 0, payloadJson: new Uint8Array(0) };
  r.nested((tag) => {
    switch (tag) {
      case (1 << 3) | LEN:
        chunk.callId = r.string();
        return;
      case (2 << 3) | VARINT:
        chunk.seq = r.uint32();
        return;
      case (3 << 3) | LEN:
        chunk.payloadJson = r.bytes();
        return;
      default:
        throw GIVE_UP;
    }
  });
  return chunk;
}

function readReport(r: Reader): Report {
  const report: Report = { $typeName: 'fleetmesh.v1.Report', kind: '', payloadJson: new Uint8Array(0), observedUnixMs: 0n };
  r.nested((tag) => {
    switch (tag) {
      case (1 << 3) | LEN:
        report.kind = r.string();
        return;
      case (2 << 3) | LEN:
        report.payloadJson = r.bytes();
        return;
      case (3 << 3) | VARINT:
        report.observedUnixMs = BigInt(r.varint());
        return;
      default:
        throw GIVE_UP;
    }
  });
  return report;
}

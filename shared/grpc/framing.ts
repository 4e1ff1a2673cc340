import { GrpcCode } from './status-codes.ts';

/**
 * gRPC's message framing over HTTP/2 (a flag byte for compression, a 4-byte
 * length, the message), for the agent's client and the broker's server alike.
 * Neither side asks for compression, so a compressed message is refused.
 */

/** Why a stream's bytes cannot be read as messages. */
export interface FramingFailure {
  code: GrpcCode;
  details: string;
}

/** The bytes of one message as it goes on the wire. */
export function frameMessage(body: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + body.byteLength);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(body.byteLength, 1);
  frame.set(body, 5);
  return frame;
}

/** Reassembles length-prefixed messages from the chunks HTTP/2 hands over. */
export class MessageReader {
  /** Bytes received and not yet a whole message, kept as they came (joined once a message is whole). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  /** `sender`: who sends the messages, as failures name it ("the broker", "the agent"). */
  constructor(
    private readonly sender: string,
    private readonly maxBytes: number,
  ) {}

  /**
   * Takes a chunk and hands each message it completes to `each`, which
   * returns false to stop reading (its call ended); a failure ends the
   * reading and is returned.
   */
  read(chunk: Buffer, each: (body: Buffer) => boolean): FramingFailure | undefined {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (this.pendingBytes >= 5) {
      let head = this.pending[0] as Buffer;
      if (head.length < 5) {
        head = Buffer.concat(this.pending);
        this.pending = [head];
      }
      const length = head.readUInt32BE(1);
      if (head.readUInt8(0) !== 0) {
        this.clear();
        return { code: GrpcCode.INTERNAL, details: `${this.sender} sent a compressed message, which was not asked for` };
      }
      if (length > this.maxBytes) {
        this.clear();
        return { code: GrpcCode.RESOURCE_EXHAUSTED, details: `${this.sender} sent a message of ${length} bytes, over the ${this.maxBytes} allowed` };
      }
      if (this.pendingBytes < 5 + length) return undefined;
      const data = this.pending.length === 1 ? head : Buffer.concat(this.pending);
      const rest = data.subarray(5 + length);
      this.pending = rest.length > 0 ? [rest] : [];
      this.pendingBytes = rest.length;
      if (!each(data.subarray(5, 5 + length))) return undefined;
    }
    return undefined;
  }

  /** Drops what is held (the call ended). */
  clear(): void {
    this.pending = [];
    this.pendingBytes = 0;
  }
}

import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { checkServerIdentity, createSecureContext, type PeerCertificate, type SecureContext } from 'node:tls';
import { type DescMessage, fromBinary, type MessageShape, toBinary } from '@bufbuild/protobuf';
import {
  AgentFrameSchema,
  BrokerFrameSchema,
  type EnrollRequest,
  EnrollRequestSchema,
  type EnrollResponse,
  EnrollResponseSchema,
  Mesh,
} from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { frameMessage, MessageReader } from '../../shared/grpc/framing.ts';
import { GrpcCode, type GrpcStatus, TrailerMetadata } from '../../shared/grpc/status-codes.ts';
import { FLEETMESH_VERSION, MAX_MESSAGE_BYTES } from '../../shared/version.ts';

/**
 * The agent's gRPC client: the Mesh service's two methods over `node:http2`
 * and mutual TLS, written to the gRPC-over-HTTP/2 protocol (length-prefixed
 * messages in a POST stream, the status in its trailers). An agent holds one
 * stream at a time and never needs name resolution policies, load balancing,
 * retries or a channel's state machine: what a general client library brings
 * for them stayed resident in every idle agent (docs/performance.md, the idle
 * agent). The broker serves the same protocol with its own server on
 * `node:http2` (broker/grpc/grpc-server.ts); tests dial it with grpc-js too.
 */

/** `node:http2`, required: an ES import builds the namespace from every export (see `agent/node-http.ts`). */
const http2: typeof import('node:http2') = createRequire(import.meta.url)('node:http2');

export interface MeshClientCredentials {
  caCertificatePem: string;
  /** Absent while enrolling: the agent has no certificate yet. */
  privateKeyPem?: string;
  certificatePem?: string;
}

/** The TLS server name sent when the broker is dialled by IP address (no server name may be an address). */
const ADDRESS_SERVER_NAME = 'fleetmesh-broker';
/** How long TCP, TLS and HTTP/2's settings may take before a dial counts as failed. */
const CONNECT_TIMEOUT_MS = 20_000;
/**
 * A ping every 20 s, and the connection is given up when one is not answered
 * within 20 s. A broker whose event loop is held answers no ping: one serving
 * 10,000 agents was seen held for 10.6 s. Leaving it then only adds a
 * reconnect (a TLS handshake it must serve) to what held it; a broker gone for
 * good is still noticed within 40 s, and one killed at once by its reset.
 */
const KEEPALIVE_INTERVAL_MS = 20_000;
const KEEPALIVE_TIMEOUT_MS = 20_000;
const USER_AGENT = `fleetmesh-agent/${FLEETMESH_VERSION}`;

/**
 * The TLS context of one identity, built once and reused by every dial:
 * building it parses the key and the certificates, which every reconnect
 * would pay again (a simulated fleet retrying together in one benchmark
 * process paid it thousands of times a second).
 */
const contexts = new WeakMap<MeshClientCredentials, SecureContext>();

function secureContextOf(credentials: MeshClientCredentials): SecureContext {
  let context = contexts.get(credentials);
  if (!context) {
    context = createSecureContext({
      ca: credentials.caCertificatePem,
      ...(credentials.privateKeyPem ? { key: credentials.privateKeyPem } : {}),
      ...(credentials.certificatePem ? { cert: credentials.certificatePem } : {}),
    });
    contexts.set(credentials, context);
  }
  return context;
}

/** `host` of `host:port` or `[v6]:port`. */
function hostOf(address: string): string {
  const bracketed = /^\[([^\]]+)\]:\d+$/.exec(address);
  if (bracketed) return bracketed[1] as string;
  return address.replace(/:\d+$/, '');
}

/** The gRPC status an HTTP status stands for, when a response is not gRPC at all (the gRPC HTTP/2 mapping). */
function statusOfHttp(httpStatus: number): GrpcCode {
  switch (httpStatus) {
    case 400:
      return GrpcCode.INTERNAL;
    case 401:
      return GrpcCode.UNAUTHENTICATED;
    case 403:
      return GrpcCode.PERMISSION_DENIED;
    case 404:
      return GrpcCode.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcCode.UNAVAILABLE;
    default:
      return GrpcCode.UNKNOWN;
  }
}

/** `grpc-message` is percent-encoded UTF-8. */
function decodeMessage(value: unknown): string {
  if (typeof value !== 'string') return '';
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The status a header block carries, when it carries one (trailers, or a trailers-only response). */
function statusOf(headers: import('node:http2').IncomingHttpHeaders): GrpcStatus | undefined {
  const code = headers['grpc-status'];
  if (typeof code !== 'string') return undefined;
  const parsed = Number(code);
  return {
    code: Number.isInteger(parsed) && parsed >= 0 && parsed <= 16 ? parsed : GrpcCode.UNKNOWN,
    details: decodeMessage(headers['grpc-message']),
    metadata: new TrailerMetadata(headers),
  };
}

function failure(code: GrpcCode, details: string): GrpcStatus {
  return { code, details, metadata: new TrailerMetadata({}) };
}

interface CallEvents<Out> {
  data: [message: Out];
  /** Once per call, last: how it ended. */
  status: [status: GrpcStatus];
}

/**
 * One call on the connection: messages written as they come, messages read
 * as whole frames arrive, and exactly one status at the end, whichever of the
 * trailers, a reset, a cancel or the connection's failure ended it.
 */
export class MeshCall<In extends DescMessage, Out extends DescMessage> extends EventEmitter<CallEvents<MessageShape<Out>>> {
  private ended: GrpcStatus | undefined;
  private received: GrpcStatus | undefined;
  private streamError: Error | undefined;
  private readonly reader = new MessageReader('the broker', MAX_MESSAGE_BYTES);
  private lastWritten: { message: MessageShape<In>; frame: Buffer } | undefined;

  constructor(
    private readonly request: import('node:http2').ClientHttp2Stream,
    private readonly input: In,
    private readonly output: Out,
    connectionFailure: () => Error | undefined,
  ) {
    super();
    request.on('response', (headers) => {
      const httpStatus = Number(headers[':status']);
      if (httpStatus !== 200) {
        this.received ??= failure(statusOfHttp(httpStatus), `the broker answered HTTP ${httpStatus}`);
        return;
      }
      const contentType = headers['content-type'];
      if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
        this.received ??= failure(GrpcCode.UNKNOWN, `the broker answered ${String(contentType)}, not gRPC`);
        return;
      }
      const trailersOnly = statusOf(headers);
      if (trailersOnly) this.received ??= trailersOnly;
    });
    request.on('trailers', (trailers) => {
      this.received ??= statusOf(trailers) ?? failure(GrpcCode.UNKNOWN, 'the broker ended the call without a status');
    });
    request.on('data', (chunk: Buffer) => this.read(chunk));
    // The broker's side is done (its messages all read): the call ends with the status it sent, and this side is closed
    // too, since HTTP/2 closes a stream only once both sides have ended.
    request.on('end', () => {
      // A stream destroyed with its connection ends too: then 'close' says why.
      if (!this.received && (request.destroyed || connectionFailure())) return;
      this.end(this.received ?? failure(GrpcCode.UNKNOWN, 'the broker ended the stream without a status'));
      if (!request.writableEnded) request.end();
    });
    // A reset or a failed connection surfaces here first, then as 'close'.
    request.on('error', (error) => {
      this.streamError ??= error;
    });
    request.on('close', () => {
      const lost = connectionFailure() ?? this.streamError;
      this.end(
        this.received ??
          failure(GrpcCode.UNAVAILABLE, lost?.message ?? `the stream to the broker closed without a status (HTTP/2 code ${request.rstCode ?? 0})`),
      );
    });
  }

  /** Sends one message; a message written again is sent from the bytes of its first encoding. */
  write(message: MessageShape<In>): void {
    if (this.ended || this.request.destroyed) return;
    if (this.lastWritten?.message !== message) {
      this.lastWritten = { message, frame: frameMessage(toBinary(this.input, message)) };
    }
    this.request.write(this.lastWritten.frame);
  }

  /** No more messages from this side. */
  endWrites(): void {
    if (!this.ended && !this.request.destroyed) this.request.end();
  }

  /** Ends the call from this side: its status is CANCELLED unless it had already ended. */
  cancel(): void {
    if (this.ended) return;
    this.end(failure(GrpcCode.CANCELLED, 'cancelled by the agent'));
    this.request.close(http2.constants.NGHTTP2_CANCEL);
  }

  private end(status: GrpcStatus): void {
    if (this.ended) return;
    this.ended = status;
    this.reader.clear();
    // Told on the next tick, as a status always is: whoever cancels finishes its own step first.
    process.nextTick(() => this.emit('status', status));
  }

  /** Decodes each whole message the chunk completes, until the call ends. */
  private read(chunk: Buffer): void {
    if (this.ended) return;
    const failure = this.reader.read(chunk, (body) => {
      let message: MessageShape<Out>;
      try {
        message = fromBinary(this.output, body);
      } catch (error) {
        this.fail(GrpcCode.INTERNAL, `the broker sent a message that does not decode: ${(error as Error).message}`);
        return false;
      }
      this.emit('data', message);
      return !this.ended;
    });
    if (failure) this.fail(failure.code, failure.details);
  }

  private fail(code: GrpcCode, details: string): void {
    this.end(failure(code, details));
    this.request.close(http2.constants.NGHTTP2_CANCEL);
  }
}

export type MeshStream = MeshCall<typeof AgentFrameSchema, typeof BrokerFrameSchema>;

/** The connection's clocks; the defaults are the agent's, a test shortens them. */
export interface MeshClientTiming {
  connectTimeoutMs?: number;
  keepaliveIntervalMs?: number;
  keepaliveTimeoutMs?: number;
}

/**
 * A connection to one broker: HTTP/2 over mutual TLS, verified against the
 * CA the agent trusts. The connection is opened by the first call and closed
 * by `close` or by its failure, which ends every call on it.
 */
export class MeshClient {
  private session: import('node:http2').ClientHttp2Session | undefined;
  private lost: Error | undefined;
  private closed = false;

  private readonly timing: Required<MeshClientTiming>;

  constructor(
    private readonly address: string,
    private readonly credentials: MeshClientCredentials,
    timing: MeshClientTiming = {},
  ) {
    this.timing = {
      connectTimeoutMs: timing.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      keepaliveIntervalMs: timing.keepaliveIntervalMs ?? KEEPALIVE_INTERVAL_MS,
      keepaliveTimeoutMs: timing.keepaliveTimeoutMs ?? KEEPALIVE_TIMEOUT_MS,
    };
  }

  /** The agent's stream: AgentFrames up, BrokerFrames down. */
  connect(): MeshStream {
    return this.call(`/${Mesh.typeName}/${Mesh.method.connect.name}`, AgentFrameSchema, BrokerFrameSchema);
  }

  /** One Enroll; rejects with the call's status when it does not end OK with an answer. */
  enroll(request: EnrollRequest, timeoutMs: number): Promise<EnrollResponse> {
    return new Promise((resolve, reject) => {
      const call = this.call(`/${Mesh.typeName}/${Mesh.method.enroll.name}`, EnrollRequestSchema, EnrollResponseSchema);
      let answer: EnrollResponse | undefined;
      const timer = setTimeout(() => {
        this.lost ??= new Error(`no answer within ${timeoutMs / 1000} s`);
        this.session?.destroy();
        call.cancel();
      }, timeoutMs);
      call.on('data', (message) => {
        answer = message;
      });
      call.on('status', (status) => {
        clearTimeout(timer);
        if (status.code === GrpcCode.CANCELLED && this.lost) {
          reject(failure(GrpcCode.DEADLINE_EXCEEDED, `enrolment: ${this.lost.message}`));
        } else if (status.code === GrpcCode.OK && answer) resolve(answer);
        else reject(status.code === GrpcCode.OK ? failure(GrpcCode.INTERNAL, 'the broker answered Enroll with no message') : status);
      });
      call.write(request);
      call.endWrites();
    });
  }

  /** Closes the connection; calls still open end as UNAVAILABLE (or CANCELLED, when cancelled first). */
  close(): void {
    this.closed = true;
    this.session?.destroy();
  }

  private call<In extends DescMessage, Out extends DescMessage>(path: string, input: In, output: Out): MeshCall<In, Out> {
    const session = this.open();
    const request = session.request(
      {
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc+proto',
        te: 'trailers',
        'grpc-accept-encoding': 'identity',
        'user-agent': USER_AGENT,
      },
      { endStream: false },
    );
    return new MeshCall(request, input, output, () => this.lost);
  }

  private open(): import('node:http2').ClientHttp2Session {
    if (this.session && !this.session.destroyed && !this.session.closed) return this.session;
    if (this.closed) throw new Error('the connection to the broker is closed');
    const host = hostOf(this.address);
    const byAddress = isIP(host) !== 0;
    this.lost = undefined;
    const session = http2.connect(`https://${this.address}`, {
      secureContext: secureContextOf(this.credentials),
      // No server name may be an address (RFC 6066): dialled by address, a placeholder name goes out and the certificate is
      // still checked against the address.
      servername: byAddress ? ADDRESS_SERVER_NAME : host,
      ...(byAddress ? { checkServerIdentity: (_name: string, certificate: PeerCertificate) => checkServerIdentity(host, certificate) } : {}),
      maxReservedRemoteStreams: 0,
      settings: { enablePush: false },
    });
    this.session = session;
    const { connectTimeoutMs, keepaliveIntervalMs, keepaliveTimeoutMs } = this.timing;
    const connectTimer = setTimeout(() => {
      this.lost ??= new Error(`no connection to the broker at ${this.address} within ${connectTimeoutMs / 1000} s`);
      session.destroy();
    }, connectTimeoutMs);
    session.once('connect', () => clearTimeout(connectTimer));
    session.on('error', (error) => {
      this.lost ??= error;
    });
    session.on('goaway', () => {});
    let awaiting: NodeJS.Timeout | undefined;
    session.once('close', () => {
      clearTimeout(connectTimer);
      clearTimeout(awaiting);
      clearInterval(keepalive);
      this.lost ??= new Error(`the connection to the broker at ${this.address} closed`);
    });
    const keepalive = setInterval(() => {
      if (awaiting || session.destroyed) return;
      awaiting = setTimeout(() => {
        this.lost ??= new Error(`the broker at ${this.address} answered no keepalive ping within ${keepaliveTimeoutMs / 1000} s`);
        session.destroy();
      }, keepaliveTimeoutMs);
      session.ping((error) => {
        clearTimeout(awaiting);
        awaiting = undefined;
        if (error) this.lost ??= error;
      });
    }, keepaliveIntervalMs);
    keepalive.unref();
    return session;
  }
}

/** A client for one broker address, with the identity's credentials (or only its CA while enrolling). */
export function createMeshClient(address: string, credentials: MeshClientCredentials): MeshClient {
  return new MeshClient(address, credentials);
}

import { EventEmitter } from 'node:events';
import http2 from 'node:http2';
import type { Socket } from 'node:net';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { toFleetError } from '../../shared/errors/fleet-error.ts';
import { type FramingFailure, frameMessage, MessageReader } from '../../shared/grpc/framing.ts';
import { type OutgoingStatus, toGrpcStatus } from '../../shared/grpc/grpc-status.ts';
import { GrpcCode } from '../../shared/grpc/status-codes.ts';

/**
 * The broker's gRPC server: the two methods of the Mesh service over
 * `node:http2` and mutual TLS, written to the gRPC-over-HTTP/2 protocol
 * (length-prefixed messages in a POST stream, the status in its trailers), as
 * the agent's client is (agent/connection/mesh-client.ts). A broker at 10,000
 * agents spent a tenth of its held loop in a general server library's layers
 * of streams and interceptors around each agent's frames (docs/performance.md);
 * the agents' one stream each needs none of them. Any gRPC client speaks to
 * it: tests dial it with grpc-js.
 */

/** A status to end a call with, as FleetErrors become (shared/grpc/grpc-status.ts). */
export type CallStatus = Partial<OutgoingStatus>;

export interface ServerOptions {
  /** What the TLS server needs: the broker's identity, and the CAs client certificates are checked against. */
  tls: { key: Buffer; cert: Buffer; ca: Buffer };
  maxMessageBytes: number;
  /** A ping this often on every connection, and the connection closed when one is not answered within the timeout. */
  keepaliveIntervalMs: number;
  keepaliveTimeoutMs: number;
}

/** One method's codec: how its requests are read and its responses written. */
export interface Codec<In, Out> {
  decode(bytes: Buffer): In;
  encode(message: Out): Uint8Array;
}

/** The percent-encoding gRPC asks of `grpc-message`: its UTF-8 bytes, printable ASCII but `%` as they are. */
function encodeMessage(details: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(details)) return details;
  let encoded = '';
  for (const byte of Buffer.from(details, 'utf8')) {
    encoded += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** A status as trailers: binary metadata (`-bin` keys) base64, the rest as it is. */
function trailersOf(status: CallStatus): http2.OutgoingHttpHeaders {
  const trailers: http2.OutgoingHttpHeaders = { 'grpc-status': String(status.code ?? GrpcCode.UNKNOWN) };
  if (status.details) trailers['grpc-message'] = encodeMessage(status.details);
  for (const [key, value] of Object.entries(status.metadata?.getMap() ?? {})) {
    trailers[key] = Buffer.isBuffer(value) ? value.toString('base64') : value;
  }
  return trailers;
}

/** The headers of every gRPC response: a status in them too makes a trailers-only response. */
const RESPONSE_HEADERS = { ':status': 200, 'content-type': 'application/grpc+proto' } as const;

function peerOf(socket: Socket | TLSSocket | undefined): string {
  if (!socket?.remoteAddress) return 'unknown';
  return socket.remotePort ? `${socket.remoteAddress}:${socket.remotePort}` : socket.remoteAddress;
}

interface CallEvents<In> {
  data: [message: In];
  /** The client sent all it will send. */
  end: [];
  /** The client went away (reset the stream, or the connection failed) before a status was sent. */
  cancelled: [];
  close: [];
  /** A status given this way is the one the call ends with. */
  error: [status: CallStatus];
}

/**
 * One call: messages read as they arrive once a 'data' listener is on (until
 * then they wait in the stream, under HTTP/2's flow control), messages written
 * as they come, and one status, sent by `end()` (OK) or by emitting 'error'
 * with a status.
 */
export class ServerCall<In, Out> extends EventEmitter<CallEvents<In>> {
  /** The client went away before the call's status was sent. */
  cancelled = false;
  private status: CallStatus | undefined;
  private readonly reader: MessageReader;
  private lastWritten: { message: Out; frame: Buffer } | undefined;

  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    private readonly codec: Codec<In, Out>,
    maxMessageBytes: number,
  ) {
    super();
    this.reader = new MessageReader('the agent', maxMessageBytes);
    this.on('error', (status) => this.finish(status));
    let reading = false;
    (this as EventEmitter).on('newListener', (event: string) => {
      if (event !== 'data' || reading) return;
      reading = true;
      stream.on('data', (chunk: Buffer) => this.read(chunk));
    });
    stream.on('end', () => {
      if (!this.status) this.emit('end');
    });
    // A reset or a failed connection: 'close' follows and says the rest.
    stream.on('error', () => {});
    stream.on('close', () => {
      if (!this.status) {
        this.cancelled = true;
        this.status = { code: GrpcCode.CANCELLED, details: 'the client went away' };
        this.emit('cancelled');
      }
      this.emit('close');
    });
    stream.on('wantTrailers', () => {
      try {
        stream.sendTrailers(trailersOf(this.status ?? { code: GrpcCode.OK }));
      } catch {
        // The stream went away meanwhile.
      }
    });
  }

  /** The response's headers go with its first message; a call ended before any gets its status in them alone. */
  private respond(): void {
    if (this.stream.headersSent) return;
    this.stream.respond({ ...RESPONSE_HEADERS, 'grpc-accept-encoding': 'identity' }, { waitForTrailers: true });
  }

  /** The peer as `ADDRESS:PORT`. */
  getPeer(): string {
    return peerOf(this.stream.session?.socket);
  }

  /** The client certificate, only when TLS verified it against the CAs (none presented, or refused: none). */
  getAuthContext(): { sslPeerCertificate?: PeerCertificate } {
    const socket = this.stream.session?.socket as TLSSocket | undefined;
    if (!socket?.authorized) return {};
    const certificate = socket.getPeerCertificate();
    return certificate.raw ? { sslPeerCertificate: certificate } : {};
  }

  /** Sends one message; the same message object written again is sent from the bytes of its first encoding. */
  write(message: Out): boolean {
    if (this.status || this.stream.destroyed) return false;
    if (this.lastWritten?.message !== message) this.lastWritten = { message, frame: frameMessage(this.codec.encode(message)) };
    this.respond();
    return this.stream.write(this.lastWritten.frame);
  }

  /** Ends the call with OK, after the messages written. */
  end(): void {
    this.finish({ code: GrpcCode.OK });
  }

  private finish(status: CallStatus): void {
    if (this.status) return;
    this.status = status;
    this.reader.clear();
    const { stream } = this;
    if (stream.destroyed || stream.writableEnded) return;
    try {
      if (stream.headersSent) stream.end();
      else stream.respond({ ...RESPONSE_HEADERS, ...trailersOf(status) }, { endStream: true });
    } catch {
      // The stream went away meanwhile.
    }
  }

  private read(chunk: Buffer): void {
    if (this.status) return;
    const failure: FramingFailure | undefined = this.reader.read(chunk, (body) => {
      let message: In;
      try {
        message = this.codec.decode(body);
      } catch (error) {
        this.emit('error', { code: GrpcCode.INTERNAL, details: `the agent sent a message that does not decode: ${(error as Error).message}` });
        return false;
      }
      this.emit('data', message);
      return !this.status;
    });
    if (failure) this.emit('error', failure);
  }
}

/** A handler of a method whose client sends one message and gets one back. */
export type UnaryHandler<In, Out> = (request: In, call: ServerCall<In, Out>) => Promise<Out>;
/** A handler of a method whose calls stream both ways. */
export type StreamHandler<In, Out> = (call: ServerCall<In, Out>) => void;

type Method = { codec: Codec<unknown, unknown> } & (
  | { kind: 'unary'; handler: UnaryHandler<unknown, unknown> }
  | { kind: 'stream'; handler: StreamHandler<unknown, unknown> }
);

/**
 * The server: connections are handed to it (`inject`, from the admission
 * gate's listener), each kept alive by pings, and each call routed by its path.
 */
export class GrpcServer {
  private readonly server: http2.Http2SecureServer;
  private readonly methods = new Map<string, Method>();
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private closed = false;

  constructor(private readonly options: ServerOptions) {
    this.server = http2.createSecureServer({
      ...options.tls,
      // A certificate is asked for and checked against the CAs, not required: an enrolling agent has none yet, and each
      // method decides (getAuthContext()).
      requestCert: true,
      rejectUnauthorized: false,
      settings: { maxConcurrentStreams: 100, enablePush: false },
    });
    // TLS failures of one connection (a stranger, a reset mid-handshake) are that connection's alone.
    this.server.on('tlsClientError', () => {});
    this.server.on('secureConnection', (socket) => socket.on('error', () => {}));
    this.server.on('sessionError', () => {});
    this.server.on('session', (session) => this.onSession(session));
    this.server.on('stream', (stream, headers) => this.onStream(stream, headers));
  }

  unary<In, Out>(path: string, codec: Codec<In, Out>, handler: UnaryHandler<In, Out>): void {
    this.methods.set(path, { kind: 'unary', codec, handler } as Method);
  }

  stream<In, Out>(path: string, codec: Codec<In, Out>, handler: StreamHandler<In, Out>): void {
    this.methods.set(path, { kind: 'stream', codec, handler } as Method);
  }

  /** A connection accepted elsewhere, still raw TCP: TLS, then HTTP/2, are this server's. */
  inject(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.server.emit('connection', socket);
  }

  /** The TLS identity and CAs for the connections that come after. */
  setTls(tls: { key: Buffer; cert: Buffer; ca: Buffer }): void {
    this.server.setSecureContext({ ...tls });
  }

  /**
   * Stops: no connection is taken any more, every connection is told to open
   * no new call (GOAWAY), and the calls still open after `graceMs` are cut.
   */
  async close(graceMs: number): Promise<void> {
    this.closed = true;
    const open = [...this.sessions];
    await new Promise<void>((resolve) => {
      let left = open.length;
      const timer = setTimeout(() => {
        for (const session of this.sessions) session.destroy();
        resolve();
      }, graceMs);
      const done = () => {
        left -= 1;
        if (left <= 0) {
          clearTimeout(timer);
          resolve();
        }
      };
      if (left === 0) done();
      for (const session of open) {
        if (session.closed || session.destroyed) done();
        else session.close(done);
      }
    });
    this.server.close();
  }

  private onSession(session: http2.ServerHttp2Session): void {
    this.sessions.add(session);
    session.on('error', () => {});
    const { keepaliveIntervalMs, keepaliveTimeoutMs } = this.options;
    let awaiting: NodeJS.Timeout | undefined;
    const keepalive = setInterval(() => {
      if (awaiting || session.destroyed) return;
      awaiting = setTimeout(() => session.destroy(), keepaliveTimeoutMs);
      try {
        session.ping(() => {
          clearTimeout(awaiting);
          awaiting = undefined;
        });
      } catch {
        // Closing already.
      }
    }, keepaliveIntervalMs);
    keepalive.unref();
    session.once('close', () => {
      clearInterval(keepalive);
      clearTimeout(awaiting);
      this.sessions.delete(session);
    });
  }

  private onStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    stream.on('error', () => {});
    const method = this.methods.get(String(headers[':path']));
    const contentType = headers['content-type'];
    if (headers[':method'] !== 'POST' || typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
      stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    if (!method) {
      // Trailers-only: the status in the one header block.
      stream.respond(
        { ...RESPONSE_HEADERS, ...trailersOf({ code: GrpcCode.UNIMPLEMENTED, details: `no method ${String(headers[':path'])}` }) },
        { endStream: true },
      );
      return;
    }
    const call = new ServerCall(stream, method.codec, this.options.maxMessageBytes);
    if (method.kind === 'stream') {
      method.handler(call);
      return;
    }
    serveUnary(call, method.handler);
  }
}

/** Reads the one request, answers it with the handler's message, or ends with its error as a status. */
function serveUnary<In, Out>(call: ServerCall<In, Out>, handler: UnaryHandler<In, Out>): void {
  let request: In | undefined;
  let requests = 0;
  call.on('data', (message) => {
    request = message;
    requests += 1;
  });
  call.on('end', () => {
    if (requests !== 1 || request === undefined) {
      call.emit('error', { code: GrpcCode.UNIMPLEMENTED, details: `a unary call takes exactly one request message, not ${requests}` });
      return;
    }
    handler(request, call).then(
      (response) => {
        call.write(response);
        call.end();
      },
      (error: unknown) => call.emit('error', toGrpcStatus(toFleetError(error))),
    );
  });
}

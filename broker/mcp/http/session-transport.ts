import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import {
  type AuthInfo,
  isInitializeRequest,
  isJsonContentType,
  type JSONRPCMessage,
  parseJSONRPCMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';

/** What the transport reads of a request: a Node `IncomingMessage` is one. */
export interface ExchangeRequest {
  method?: string | undefined;
  headers: IncomingHttpHeaders;
}

/** What the transport writes an answer to: a Node `ServerResponse` is one. */
export interface ExchangeResponse {
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  flushHeaders(): void;
  write(chunk: string): unknown;
  end(chunk?: string | Buffer): unknown;
  once(event: 'close', listener: () => void): unknown;
}

type RequestId = string | number;

/**
 * One open answer: a POST's, carrying the answers of its requests, or the
 * session's GET stream. A POST's form is chosen as late as it can be: its
 * answers alone, as soon as they are all there, go out as one JSON body; an
 * event stream is started when something else must be said first (progress,
 * a log line, an elicitation) or when the answers take longer than
 * SSE_AFTER_MS.
 */
interface EventStream {
  res: ExchangeResponse;
  form: 'undecided' | 'events' | 'ended';
  keepAlive: NodeJS.Timeout | undefined;
  /** Starts the event stream of an answer that is slow to come. */
  decide: NodeJS.Timeout | undefined;
  /** The requests whose answers this stream carries, in the order they came (none for the GET stream). */
  requests: RequestId[];
}

/** How long a quiet event stream waits before a comment keeps proxies and clients from timing it out. */
const KEEP_ALIVE_MS = 15_000;
/** How long a POST's answers may take before they are given an event stream (whose headers tell the client the call was taken). */
const SSE_AFTER_MS = 100;
const MAX_BATCH = 100;
/** The answer of a request its session ended under. */
const UNANSWERED_AT_CLOSE =
  'The MCP session ended before this request was answered (the broker stopped, the identity was revoked, or the session was deleted or moved to another broker): whether a change it asked for took effect is unknown, so check before sending it again';
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

const JSON_HEADERS = { 'content-type': 'application/json' };

function event(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** A request header's value (the first, when it came several times). */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function isRequest(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId; method: string } {
  return 'method' in message && 'id' in message;
}

function isAnswer(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  return ('result' in message || 'error' in message) && 'id' in message;
}

/**
 * A 2025-era MCP session over Streamable HTTP (protocol revisions up to
 * 2025-11-25), served on Node's own request and response objects. A POST of
 * JSON-RPC requests is answered with one JSON body when its answers come
 * quickly and alone, else with an event stream that carries the requests'
 * progress, log lines and elicitations and ends with their answers (the
 * protocol lets the server choose per request); a POST of notifications or
 * answers gets 202; a GET opens the session's stream of server
 * notifications; DELETE ends the session. The same rules as the SDK's
 * web-standard transport (Accept and Content-Type checked, the session id and
 * protocol version header checked, one initialize per session, one GET
 * stream at a time), without turning each exchange into a web `Request` and
 * a `ReadableStream`.
 */
export class SessionTransport implements Transport {
  sessionId: string | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: Transport['onmessage'];
  private started = false;
  private initialized = false;
  private closed = false;
  private supportedVersions: string[] = [...SUPPORTED_PROTOCOL_VERSIONS];
  /** The open answers: every POST still owed one, and the GET stream. */
  private readonly streams = new Set<EventStream>();
  private standalone: EventStream | undefined;
  /** Which stream carries each open request's answer. */
  private readonly streamOf = new Map<RequestId, EventStream>();
  /** Answers given, kept until every request of their stream has one (a batch is answered together). */
  private readonly answered = new Map<RequestId, JSONRPCMessage>();

  constructor(
    private readonly options: {
      /** The id the session takes when its initialize arrives. */
      sessionId: string;
      /** Runs when the initialize arrives, before it is handled. */
      onInitialized?: (sessionId: string) => void | Promise<void>;
      /** Runs when the client ends the session with DELETE. */
      onDeleted?: (sessionId: string) => void | Promise<void>;
    },
  ) {}

  async start(): Promise<void> {
    if (this.started) throw new Error('Transport already started');
    this.started = true;
  }

  /** Whether a stream of the session is open (its GET stream, or a POST's answer still streaming): its client is there. */
  get streaming(): boolean {
    return this.streams.size > 0;
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.supportedVersions = versions;
  }

  /**
   * Serves one HTTP exchange of the session. `parsed` is the POST body,
   * already read and parsed (undefined when it was not JSON). Resolves with
   * the HTTP status written, once the headers are decided (an event stream
   * goes on after that).
   */
  async handle(req: ExchangeRequest, res: ExchangeResponse, parsed: unknown, authInfo: AuthInfo | undefined): Promise<number> {
    if (this.closed) return this.refuse(res, 404, -32001, 'Session not found');
    switch (req.method) {
      case 'POST':
        return this.post(req, res, parsed, authInfo);
      case 'GET':
        return this.get(req, res);
      case 'DELETE':
        return this.delete(req, res);
      default:
        res.writeHead(405, { allow: 'GET, POST, DELETE', 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }));
        return 405;
    }
  }

  private refuse(res: ExchangeResponse, status: number, code: number, message: string): number {
    this.onerror?.(new Error(message));
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
    return status;
  }

  private async post(req: ExchangeRequest, res: ExchangeResponse, parsed: unknown, authInfo: AuthInfo | undefined): Promise<number> {
    const accept = header(req.headers, 'accept');
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
      return this.refuse(res, 406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (!isJsonContentType(header(req.headers, 'content-type'))) {
      return this.refuse(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    if (parsed === undefined) return this.refuse(res, 400, -32700, 'Parse error: Invalid JSON');
    if (Array.isArray(parsed) && parsed.length > MAX_BATCH) {
      return this.refuse(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
    }
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(parsed) ? parsed : [parsed]).map((message) => parseJSONRPCMessage(message));
    } catch {
      return this.refuse(res, 400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    const initializing = messages.some((m) => 'method' in m && m.method === 'initialize' && isInitializeRequest(m));
    if (initializing) {
      if (this.initialized) return this.refuse(res, 400, -32600, 'Invalid Request: Server already initialized');
      if (messages.length > 1) return this.refuse(res, 400, -32600, 'Invalid Request: Only one initialization request is allowed');
      this.sessionId = this.options.sessionId;
      this.initialized = true;
      await this.options.onInitialized?.(this.sessionId);
    } else {
      const refused = this.checkSession(req, res);
      if (refused) return refused;
    }
    if (this.closed) return this.refuse(res, 404, -32001, 'Session not found');
    const extra = authInfo ? { authInfo } : undefined;
    const requests = messages.filter(isRequest);
    if (requests.length === 0) {
      for (const message of messages) this.onmessage?.(message, extra);
      res.writeHead(202, {});
      res.end();
      return 202;
    }
    const stream = this.open(
      res,
      requests.map((r) => r.id),
    );
    for (const request of requests) this.streamOf.set(request.id, stream);
    stream.decide = setTimeout(() => this.startEvents(stream), SSE_AFTER_MS);
    for (const message of messages) this.onmessage?.(message, extra);
    return 200;
  }

  private get(req: ExchangeRequest, res: ExchangeResponse): number {
    if (!header(req.headers, 'accept')?.includes('text/event-stream')) {
      return this.refuse(res, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
    }
    const refused = this.checkSession(req, res);
    if (refused) return refused;
    if (this.standalone) return this.refuse(res, 409, -32000, 'Conflict: Only one SSE stream is allowed per session');
    this.standalone = this.open(res, []);
    this.startEvents(this.standalone);
    return 200;
  }

  private async delete(req: ExchangeRequest, res: ExchangeResponse): Promise<number> {
    const refused = this.checkSession(req, res);
    if (refused) return refused;
    try {
      if (this.sessionId) await this.options.onDeleted?.(this.sessionId);
      res.writeHead(200, {});
      res.end();
      return 200;
    } finally {
      await this.close();
    }
  }

  /** The refusal written when a request does not belong to this initialized session or names a protocol version not spoken, else 0. */
  private checkSession(req: ExchangeRequest, res: ExchangeResponse): number {
    if (!this.initialized) return this.refuse(res, 400, -32000, 'Bad Request: Server not initialized');
    const sessionId = header(req.headers, 'mcp-session-id');
    if (!sessionId) return this.refuse(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    if (sessionId !== this.sessionId) return this.refuse(res, 404, -32001, 'Session not found');
    const version = header(req.headers, 'mcp-protocol-version');
    if (version !== undefined && !this.supportedVersions.includes(version)) {
      return this.refuse(res, 400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${this.supportedVersions.join(', ')})`);
    }
    return 0;
  }

  private open(res: ExchangeResponse, requests: RequestId[]): EventStream {
    const stream: EventStream = { res, form: 'undecided', keepAlive: undefined, decide: undefined, requests };
    this.streams.add(stream);
    // The client left: what is still to be said on this stream has nowhere to go.
    res.once('close', () => this.forget(stream));
    return stream;
  }

  /** Gives an answer the form of an event stream, its headers sent at once, with the answers already given as its first events. */
  private startEvents(stream: EventStream): void {
    if (stream.form !== 'undecided') return;
    clearTimeout(stream.decide);
    stream.form = 'events';
    stream.res.writeHead(200, this.sessionId === undefined ? SSE_HEADERS : { ...SSE_HEADERS, 'mcp-session-id': this.sessionId });
    stream.res.flushHeaders();
    stream.keepAlive = setInterval(() => stream.res.write(': keepalive\n\n'), KEEP_ALIVE_MS);
    stream.keepAlive.unref();
    for (const id of stream.requests) {
      const answer = this.answered.get(id);
      if (answer) stream.res.write(event(answer));
    }
  }

  /** Ends a stream (its response is ended unless the client already left) and forgets it. */
  private forget(stream: EventStream, end = false): void {
    if (!this.streams.delete(stream)) return;
    clearInterval(stream.keepAlive);
    clearTimeout(stream.decide);
    if (this.standalone === stream) this.standalone = undefined;
    for (const id of stream.requests) {
      if (this.streamOf.get(id) === stream) this.streamOf.delete(id);
      this.answered.delete(id);
    }
    if (end && stream.form !== 'ended') {
      // Closed before its answers came: an undecided answer becomes an empty event stream, as a closed one would end.
      if (stream.form === 'undecided') stream.res.writeHead(200, SSE_HEADERS);
      stream.res.end();
    }
    stream.form = 'ended';
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const answer = isAnswer(message);
    const requestId = answer ? message.id : options?.relatedRequestId;
    if (requestId === undefined) {
      if (answer) throw new Error('Cannot send a response on a standalone SSE stream unless resuming a previous client request');
      // A notification of the session's own: only an open GET stream hears it.
      if (this.standalone) this.standalone.res.write(event(message));
      return;
    }
    const stream = this.streamOf.get(requestId);
    if (!stream) {
      // The request's stream is gone (its client left); a late notification of it has nowhere to go either.
      if (answer) this.onerror?.(new Error(`Response for request ID ${String(requestId)} is undeliverable: its stream is closed`));
      return;
    }
    if (!answer) {
      this.startEvents(stream);
      stream.res.write(event(message));
      return;
    }
    this.answered.set(requestId, message);
    const last = stream.requests.every((id) => this.answered.has(id));
    if (stream.form === 'events') {
      if (last) stream.res.end(event(message));
      else stream.res.write(event(message));
    } else if (last) {
      // Every answer is there and nothing else was said: one JSON body (an array for a batch).
      const answers = stream.requests.map((id) => this.answered.get(id));
      // Encoded once: a string body would be measured (its UTF-8 length) and then encoded, two passes over megabytes.
      const body = Buffer.from(JSON.stringify(answers.length === 1 ? answers[0] : answers));
      stream.res.writeHead(200, {
        ...JSON_HEADERS,
        ...(this.sessionId === undefined ? {} : { 'mcp-session-id': this.sessionId }),
        'content-length': body.length,
      });
      stream.res.end(body);
    }
    if (!last) return;
    stream.form = 'ended';
    this.forget(stream);
  }

  /**
   * Ends the session. A request still waiting for its answer is answered
   * with an error rather than left hanging (a client waits out its own
   * timeout on a stream that ends without its answer): the broker is
   * stopping past its grace, the identity was revoked, the client deleted
   * the session, or another broker took it over.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [id, stream] of [...this.streamOf]) {
      if (this.answered.has(id) || !this.streams.has(stream)) continue;
      await this.send({ jsonrpc: '2.0', id, error: { code: -32000, message: UNANSWERED_AT_CLOSE } });
    }
    for (const stream of [...this.streams]) this.forget(stream, true);
    this.streamOf.clear();
    this.answered.clear();
    this.onclose?.();
  }
}

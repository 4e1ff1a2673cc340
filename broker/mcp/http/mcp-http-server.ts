import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { type AuthInfo, classifyInboundRequest, createMcpHandler, InMemoryServerEventBus, type McpHttpHandler } from '@modelcontextprotocol/server';
import { FleetError, toFleetError } from '../../../shared/errors/fleet-error.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import { type Identity, parseIdentityToken, TokenRefused, verifyBearerToken } from '../../auth/identities.ts';
import type { RefusalAudit } from '../../calls/refusal-audit.ts';
import { closeHttp, type HttpLimits, hostAllowed, listenHttp, loopbackHosts } from '../../http/listen-http.ts';
import { CLOSES_CONNECTION, readBody } from '../../http/read-body.ts';
import { ThrottledWarnings } from '../../limits/throttled-warnings.ts';
import type { BrokerStore } from '../../store/broker-store.ts';
import type { McpSessionRow } from '../../store/mcp-sessions-table.ts';
import { createIconRoutes } from '../icons/icon-routes.ts';
import type { McpSession, McpSessionEra } from '../mcp-session.ts';
import { replayHandshake } from '../sessions/replay-handshake.ts';
import { SharedSessions } from '../sessions/shared-sessions.ts';
import type { McpTasks } from '../tasks/mcp-tasks.ts';
import { type LiveSession, LiveSessions } from './live-sessions.ts';
import { header, SessionTransport } from './session-transport.ts';
import { sendWebResponse, toWebRequest } from './web-exchange.ts';

/** The icons tools/list and the other lists point at, served beside /mcp without a bearer token. */
const ICON_ROUTES = createIconRoutes();

interface McpHttpServerOptions {
  host: string;
  port: number;
  /** Host header values accepted (host:port); `*` accepts any. */
  allowedHosts: string[];
  /** Origin header values accepted; requests without Origin are always accepted. */
  allowedOrigins: string[];
  /** The public URL of the endpoint, for the protected resource metadata. Default: http://HOST:PORT/mcp. */
  publicUrl: string | undefined;
  /** Connections and request clocks of the listener. */
  httpLimits: HttpLimits;
  /** 2025-era sessions one identity may hold here, and how long one may go unused. */
  sessionLimits: McpSessionLimits;
  store: BrokerStore;
  log: Logger;
  /**
   * A 2025-era session (`legacy`: one server for the session's life) or an identity's 2026-era endpoint (`modern`: a server per request).
   * `iconOrigin`: where the legacy session's icon URLs point (see iconOrigin()).
   */
  createSession(identity: Identity, era: McpSessionEra, iconOrigin: string | undefined): McpSession;
  /** Where refused bearer tokens are audited. */
  refusals: RefusalAudit;
  /** The MCP tasks of every session, started and stopped with the server. */
  tasks: McpTasks;
  /** Extra routes (health, metrics) served without a bearer token, behind the same Host and Origin checks as /mcp. */
  routes?: Record<string, (req: IncomingMessage, res: ServerResponse) => void | Promise<void>>;
}

export interface McpSessionLimits {
  /** 2025-era sessions one identity may hold on this broker at once. */
  perIdentity: number;
  /** A session (or 2026-era endpoint) unused for this long, with no stream open, is ended. */
  idleMs: number;
}

/**
 * Where one identity's 2026-07-28 requests are served: stateless requests
 * each get a fresh server from the identity's session, and its
 * `subscriptions/listen` streams hear only what that session publishes.
 */
interface ModernEndpoint {
  handler: McpHttpHandler;
  session: McpSession;
  identityId: string;
  lastUsed: number;
  /** When the identity expires, as its last request found it. */
  expiresAt: number;
  /** Its `subscriptions/listen` streams open now: while one is, the endpoint is in use. */
  listening: number;
}

/** Why a session named by a request cannot be served here ('full': its identity holds all the sessions it may). */
type ResumeRefusal = 'not_found' | 'forbidden' | 'unavailable' | 'full';

const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Bearer tokens remembered for a store outage; past it the memory starts afresh. */
const MAX_PROVEN_TOKENS = 10_000;
/** How often the store is asked what changed for the sessions here: a revocation (on any broker sharing the store) ends them within this. */
const REVOCATION_CHECK_MS = 1000;
/**
 * How far back each of those rounds reads from the last one's start: the
 * clocks of brokers and of the CLI that revokes differ a little, and a write
 * commits after the time it carries.
 */
const STORE_CLOCK_MARGIN_MS = 5000;
/** A session of an identity at its limit gives way to a new one once unused for this long, with no stream open. */
const RECLAIM_AFTER_MS = 60_000;
/**
 * How long a stopping broker waits for the answers it owes: the longest call
 * deadline a client may ask for (60 s) is not waited out in full, since an
 * orchestrator's stop grace is often 30 s.
 */
const ANSWER_GRACE_MS = 25_000;
/** What a request that reaches a stopping broker is told: it was not handled, so it may be sent again as it is. */
const STOPPING_MESSAGE =
  'Unavailable: this broker is shutting down and did not handle the request; send it again (to another broker of the cluster, or to this one once it is back)';

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** The next step of a caller refused for its token, whoever runs the broker. */
const NEW_TOKEN_STEP =
  "Use the admin token `npm start` printed (kept in .fleetmesh/admin.token), or make one on the broker's machine: fleetmesh identity create NAME --level 0..3.";

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}

function parseJson(body: Buffer): unknown {
  try {
    return body.length ? JSON.parse(body.toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
}

/** The resource URIs a 2026-07-28 `subscriptions/listen` request asks to hear of (none for anything else). */
function listenedResources(body: unknown): string[] {
  if (!isListen(body)) return [];
  const uris = (body as { params?: { notifications?: { resourceSubscriptions?: unknown } } }).params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((uri): uri is string => typeof uri === 'string').slice(0, 100) : [];
}

/** A 2026-07-28 `subscriptions/listen` request, whose answer is a stream that lasts as long as the client listens. */
function isListen(body: unknown): boolean {
  return body !== null && typeof body === 'object' && (body as { method?: unknown }).method === 'subscriptions/listen';
}

/** Whether a body asks for something (a JSON-RPC request), rather than only answering the server or notifying it. */
function asksForSomething(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => m && typeof m === 'object' && 'method' in m && 'id' in m);
}

/**
 * Whether a request is 2025-era traffic (initialize, Mcp-Session-Id), as the
 * SDK's entry classifies it, read from the Node request: a POST whose body is
 * not JSON is answered by the 2025-era rules too.
 */
function isLegacy(req: IncomingMessage, parsed: unknown): boolean {
  const method = (req.method ?? 'GET').toUpperCase();
  if (method === 'POST' && parsed === undefined) return true;
  return (
    classifyInboundRequest({
      httpMethod: method,
      protocolVersionHeader: header(req.headers, 'mcp-protocol-version'),
      mcpMethodHeader: header(req.headers, 'mcp-method'),
      mcpNameHeader: header(req.headers, 'mcp-name'),
      ...(parsed === undefined ? {} : { body: parsed }),
    }).kind === 'legacy'
  );
}

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => m && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize');
}

/** The host names a loopback-bound endpoint answers to by default. */
/**
 * MCP over Streamable HTTP at /mcp: Host and Origin checked against an
 * allow-list (DNS rebinding), a bearer token on every request, then the era
 * decided per request. 2025-era traffic (initialize, Mcp-Session-Id) gets one
 * SDK transport and session per MCP session, kept in the store too so that
 * any broker on it resumes a session it does not hold, 404 for an unknown or
 * ended one; 2026-07-28 traffic (`server/discover`, the per-request `_meta`
 * envelope) is served statelessly by one endpoint per identity.
 */
export class McpHttpServer {
  private server: Server | undefined;
  private readonly sessions = new LiveSessions();
  /** 2025-era sessions in the store, which this broker resumes when a request names one it does not hold. */
  private readonly shared: SharedSessions;
  /** Sessions being resumed, by id: requests that name one at once wait for the same resumption. */
  private readonly resuming = new Map<string, Promise<LiveSession | ResumeRefusal>>();
  /** One per identity that sent 2026-07-28 requests, by identity id. */
  private readonly modern = new Map<string, ModernEndpoint>();
  /** When each identity's last use was recorded, so a busy client does not write the store on every request. */
  private readonly touched = new Map<string, number>();
  /**
   * The identity each bearer token last proved (by the token's hash): while
   * the store does not answer, a token it accepted before still reads the fleet.
   */
  private readonly proven = new Map<string, Identity>();
  private sweeper: NodeJS.Timeout | undefined;
  private revocationChecker: NodeJS.Timeout | undefined;
  /** Set once stop() begins: requests that ask for something new are refused, answers owed are still sent. */
  private stopping = false;
  /** POSTs to /mcp whose answer is still being written (an SSE answer lasts until its call ends). */
  private readonly answering = new Set<ServerResponse>();
  /** Requests with a foreign Host or Origin are logged, at most 20 lines at once and 6 a minute. */
  private readonly refusedHosts: ThrottledWarnings;
  /** Sessions refused to an identity at its limit, logged as rarely. */
  private readonly refusedSessions: ThrottledWarnings;
  /** When the last round of the revocation sweep began: the next one reads what changed since. */
  private sweptMs = Date.now();
  port = 0;

  constructor(private readonly options: McpHttpServerOptions) {
    this.refusedHosts = new ThrottledWarnings(options.log, { burst: 20, perMinute: 6 });
    this.refusedSessions = new ThrottledWarnings(options.log, { burst: 20, perMinute: 6 });
    this.shared = new SharedSessions(options.store, options.log, options.sessionLimits.idleMs);
  }

  get url(): string {
    return this.options.publicUrl ?? `http://${this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host}:${this.port}/mcp`;
  }

  private get metadataUrl(): string {
    const url = new URL(this.url);
    return `${url.origin}/.well-known/oauth-protected-resource${url.pathname}`;
  }

  /** Every session that may be told of a change: 2025-era sessions and each identity's 2026-era endpoint. */
  liveSessions(): McpSession[] {
    return [...[...this.sessions.values()].map((s) => s.session), ...[...this.modern.values()].map((m) => m.session)];
  }

  async start(): Promise<number> {
    const server = await listenHttp(
      this.options.host,
      this.options.port,
      this.options.httpLimits,
      (req, res) => this.handle(req, res),
      (error, res) => {
        this.options.log.error('MCP request failed', { error: (error as Error).message });
        if (!res.headersSent) jsonRpcError(res, 500, -32603, 'internal error');
        else res.end();
      },
    );
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    this.options.tasks.start();
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(60_000, this.options.sessionLimits.idleMs / 2));
    this.sweeper.unref();
    this.revocationChecker = setInterval(() => {
      // One round at a time: a slow store must not pile rounds up.
      if (this.checkingRevocations) return;
      this.checkingRevocations = true;
      void this.closeRevoked().finally(() => {
        this.checkingRevocations = false;
      });
    }, REVOCATION_CHECK_MS);
    this.revocationChecker.unref();
    return this.port;
  }

  /**
   * Stops the orderly way: no new connection is taken and idle ones are
   * closed, so clients move on (a relay given several brokers opens its
   * session on the next one); a request that still arrives is refused with
   * 503, unhandled; the answers of requests already taken are sent, for up
   * to ANSWER_GRACE_MS, before the sessions and their connections close.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.sweeper);
    clearInterval(this.revocationChecker);
    const server = this.server;
    this.server = undefined;
    server?.close();
    server?.closeIdleConnections();
    await this.answersSent(ANSWER_GRACE_MS);
    await this.options.tasks.stop();
    await Promise.all([...this.sessions.values()].map((s) => s.transport.close().catch(() => {})));
    this.sessions.clear();
    await Promise.all([...this.modern.values()].map((m) => m.handler.close().catch(() => {})));
    this.modern.clear();
    await closeHttp(server);
  }

  /** Resolves once every answer owed has been written (or its client left), or after `graceMs`. */
  private async answersSent(graceMs: number): Promise<void> {
    const until = Date.now() + graceMs;
    while (this.answering.size > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    if (this.answering.size > 0) this.options.log.warn('MCP answers still owed when the broker stopped', { requests: this.answering.size });
  }

  private allowedHost(host: string | undefined): boolean {
    return hostAllowed(this.options.allowedHosts, this.port, host);
  }

  private allowedOrigin(origin: string | undefined): boolean {
    if (origin === undefined) return true;
    const allowed = this.options.allowedOrigins.length ? this.options.allowedOrigins : loopbackHosts(this.port).map((h) => `http://${h}`);
    return allowed.includes('*') || allowed.some((a) => a.toLowerCase() === origin.toLowerCase());
  }

  private checkingRevocations = false;

  /**
   * Ends the sessions and 2026-era endpoints of identities revoked or expired
   * since they opened, and closes the sessions another broker took over. Each
   * round reads only what changed since the last one (identities revoked,
   * session rows moved) and the rows of identities whose expiry passed, so
   * its cost follows the changes, not the number of sessions open; a round
   * with nothing open reads nothing.
   */
  private async closeRevoked(): Promise<void> {
    const startedMs = Date.now();
    if (this.sessions.size === 0 && this.modern.size === 0) {
      this.sweptMs = startedMs;
      return;
    }
    const since = this.sweptMs - STORE_CLOCK_MARGIN_MS;
    let revoked: string[];
    let moved: string[];
    try {
      [revoked, moved] = await Promise.all([this.options.store.identities.revokedSince(since), this.shared.movedSince(since)]);
    } catch {
      // The store did not answer: the next round reads from the same point.
      return;
    }
    this.sweptMs = startedMs;
    const ending = new Set(revoked);
    for (const identityId of await this.expired(startedMs)) ending.add(identityId);
    const ended: string[] = [];
    for (const identityId of ending) {
      const endpoint = this.modern.get(identityId);
      if (endpoint) {
        this.modern.delete(identityId);
        void endpoint.handler.close().catch(() => {});
      }
      for (const id of this.sessions.idsOf(identityId)) {
        this.sessions
          .delete(id)
          ?.transport.close()
          .catch(() => {});
        ended.push(id);
      }
    }
    if (ended.length) this.shared.ended(ended);
    // Another broker serves these now (or served them last): it alone tells them of changes. A client that still
    // talks to this broker resumes its session here.
    for (const id of moved) {
      const live = this.sessions.get(id);
      if (!live?.shared) continue;
      this.sessions.delete(id);
      void live.transport.close().catch(() => {});
    }
  }

  /**
   * The identities with sessions or an endpoint here whose expiry, as last
   * known, has passed and whose row confirms it (it may have been extended
   * since, which the next request would have told).
   */
  private async expired(nowMs: number): Promise<string[]> {
    const candidates = new Set(this.sessions.expiredBy(nowMs));
    for (const [identityId, endpoint] of this.modern) if (endpoint.expiresAt <= nowMs) candidates.add(identityId);
    const expired: string[] = [];
    for (const identityId of candidates) {
      let row: Awaited<ReturnType<BrokerStore['identities']['get']>>;
      try {
        row = await this.options.store.identities.get(identityId);
      } catch {
        continue;
      }
      if (row && row.revokedAt === null && row.expiresAt > nowMs) {
        this.sessions.expires(identityId, row.expiresAt);
        const endpoint = this.modern.get(identityId);
        if (endpoint) endpoint.expiresAt = row.expiresAt;
      } else {
        expired.push(identityId);
      }
    }
    return expired;
  }

  /** Ends the sessions and endpoints unused for the idle time; one with a stream open is in use, and the store is told so. */
  private closeIdle(): void {
    const now = Date.now();
    const { idleMs } = this.options.sessionLimits;
    const idle: string[] = [];
    for (const [id, live] of [...this.sessions.entries()]) {
      if (live.transport.streaming) {
        live.lastUsed = now;
        if (live.shared) this.shared.used(id, undefined);
      } else if (now - live.lastUsed > idleMs) {
        this.sessions.delete(id);
        idle.push(id);
        void live.transport.close().catch(() => {});
      }
    }
    this.shared.ended(idle);
    this.shared.prune();
    for (const [id, endpoint] of this.modern) {
      if (endpoint.listening > 0) endpoint.lastUsed = now;
      else if (now - endpoint.lastUsed > idleMs) {
        this.modern.delete(id);
        void endpoint.handler.close().catch(() => {});
      }
    }
  }

  /**
   * Whether `identity` may open one more 2025-era session here. At its limit,
   * its session unused the longest gives way, if that is RECLAIM_AFTER_MS or
   * more with no stream open (a client that never ends its sessions is not
   * locked out until they expire); a burst of new sessions is refused.
   */
  private makeRoom(identity: Identity): boolean {
    if (this.sessions.countOf(identity.id) < this.options.sessionLimits.perIdentity) return true;
    const now = Date.now();
    let oldest: { id: string; live: LiveSession } | undefined;
    for (const id of this.sessions.idsOf(identity.id)) {
      const live = this.sessions.get(id);
      if (!live || live.transport.streaming || now - live.lastUsed < RECLAIM_AFTER_MS) continue;
      if (!oldest || live.lastUsed < oldest.live.lastUsed) oldest = { id, live };
    }
    if (!oldest) return false;
    this.sessions.delete(oldest.id);
    if (oldest.live.shared) this.shared.ended([oldest.id]);
    void oldest.live.transport.close().catch(() => {});
    return true;
  }

  /** The answer to a new session of an identity at its limit: what the limit is, and how to get under it. */
  private tooManySessions(res: ServerResponse, identity: Identity): void {
    const { perIdentity, idleMs } = this.options.sessionLimits;
    this.refusedSessions.warn('MCP session refused: the identity holds all the sessions it may', { identity: identity.name, sessions: perIdentity });
    jsonRpcError(
      res,
      429,
      -32000,
      `Too many sessions: identity "${identity.name}" already has ${perIdentity} MCP sessions open on this broker, the most one identity may, all used in the last ${RECLAIM_AFTER_MS / 1000} s. ` +
        `Reuse a session, or end those you no longer need (DELETE /mcp with their Mcp-Session-Id); one unused for ${RECLAIM_AFTER_MS / 1000} s gives way to a new one, and one unused for ${idleMs / 60_000} minutes ends by itself. ` +
        'An operator may raise --mcp-sessions-per-identity, or give each client an identity of its own.',
      { 'retry-after': String(RECLAIM_AFTER_MS / 1000) },
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    // Every path, authenticated or not: a page on another site must not read /metrics or /readyz through DNS rebinding either.
    if (!this.allowedHost(req.headers.host) || !this.allowedOrigin(req.headers.origin)) {
      this.refusedHosts.warn('HTTP request refused: Host or Origin not allowed', { path: url.pathname, host: req.headers.host, origin: req.headers.origin });
      const message = 'Forbidden: the Host or Origin header is not allowed (DNS rebinding protection; see --mcp-allowed-hosts)';
      if (url.pathname === '/mcp') jsonRpcError(res, 403, -32000, message);
      else sendJson(res, 403, { error: message });
      return;
    }
    if (this.stopping && url.pathname !== '/mcp') {
      sendJson(res, 503, { error: STOPPING_MESSAGE }, { connection: 'close' });
      return;
    }
    const route = this.options.routes?.[url.pathname] ?? ICON_ROUTES[url.pathname];
    if (route) return route(req, res);
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource')) {
      sendJson(res, 200, {
        resource: this.url,
        authorization_servers: [],
        bearer_methods_supported: ['header'],
        resource_name: 'fleetmesh',
        resource_documentation: 'Bearer tokens are issued by the operator: fleetmesh identity create NAME --level 0..3',
      });
      return;
    }
    if (url.pathname !== '/mcp') {
      sendJson(res, 404, { error: 'not found', hint: 'The MCP endpoint is /mcp.' });
      return;
    }
    const identity = await this.authenticate(req, res);
    if (!identity) return;
    const authInfo: AuthInfo = {
      token: 'redacted',
      clientId: identity.id,
      scopes: [],
      expiresAt: Math.floor(identity.expiresAt / 1000),
      extra: { identity: identity.name },
    };
    let body: Buffer | undefined;
    if (req.method === 'POST') {
      try {
        body = await readBody(req, { maxBytes: MAX_BODY_BYTES, timeoutMs: this.options.httpLimits.bodyTimeoutMs });
      } catch (error) {
        const refused = toFleetError(error);
        const status = refused.details?.httpStatus;
        // Without a status the client left before its body arrived: nobody to answer.
        if (typeof status === 'number') jsonRpcError(res, status, -32600, `Invalid Request: ${refused.message}. ${refused.hint}`, CLOSES_CONNECTION);
        return;
      }
    }
    const parsed = body === undefined ? undefined : parseJson(body);
    // A stopping broker still takes what completes work it owes (a client's answer to an elicitation, a cancellation).
    if (this.stopping && (body === undefined || asksForSomething(parsed))) {
      jsonRpcError(res, 503, -32000, STOPPING_MESSAGE, { connection: 'close' });
      return;
    }
    // A 2026-07-28 listen stream is open for as long as its client listens: it is not an answer owed.
    if (req.method === 'POST' && !isListen(parsed)) {
      this.answering.add(res);
      res.once('close', () => this.answering.delete(res));
    }
    // A session this broker serves is 2025-era by its nature (2026-07-28 has no sessions): no need to classify what its client sends.
    const held = header(req.headers, 'mcp-session-id');
    if ((held !== undefined && this.sessions.has(held)) || isLegacy(req, parsed)) {
      await this.handleLegacy(req, res, body, parsed, identity, authInfo);
      return;
    }
    const aborted = new AbortController();
    res.once('close', () => aborted.abort());
    const request = toWebRequest(req, body, aborted.signal);
    const endpoint = this.modernEndpoint(identity);
    if (isListen(parsed)) {
      endpoint.listening += 1;
      res.once('close', () => {
        endpoint.listening -= 1;
      });
    }
    // A listen stream names its resources without subscribing: the session watches the ones its identity may read.
    const uris = listenedResources(parsed);
    if (uris.length) await endpoint.session.listen(uris);
    await sendWebResponse(res, await endpoint.handler.fetch(request, { authInfo, ...(parsed === undefined ? {} : { parsedBody: parsed }) }));
  }

  /**
   * The origin icon URLs are built on: the public URL's when one is set (a
   * proxy in front may speak HTTPS), else the request's own, whose Host header
   * the allow-list has already checked.
   */
  private iconOrigin(requestUrl: string): string {
    return new URL(this.options.publicUrl ?? requestUrl).origin;
  }

  /** iconOrigin of a Node request: its Host header, already checked against the allow-list. */
  private nodeIconOrigin(req: IncomingMessage): string {
    return this.iconOrigin(`http://${req.headers.host ?? 'localhost'}/`);
  }

  /** The 2026-07-28 endpoint of an identity, made on its first modern request. */
  private modernEndpoint(identity: Identity): ModernEndpoint {
    let endpoint = this.modern.get(identity.id);
    if (!endpoint) {
      const session = this.options.createSession(identity, 'modern', undefined);
      const bus = new InMemoryServerEventBus();
      const handler = createMcpHandler((context) => session.createServer(context.requestInfo && this.iconOrigin(context.requestInfo.url)), {
        legacy: 'reject',
        bus,
        maxRequestBodySize: MAX_BODY_BYTES,
        onerror: (error) => this.options.log.debug('MCP request refused', { error: error.message }),
      });
      session.attachBus(bus);
      endpoint = { handler, session, identityId: identity.id, lastUsed: Date.now(), expiresAt: identity.expiresAt, listening: 0 };
      this.modern.set(identity.id, endpoint);
    }
    endpoint.lastUsed = Date.now();
    endpoint.expiresAt = identity.expiresAt;
    return endpoint;
  }

  /** A 2025-era request: an initialize opens a session, everything else names one with Mcp-Session-Id. */
  private async handleLegacy(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer | undefined,
    parsed: unknown,
    identity: Identity,
    authInfo: AuthInfo,
  ): Promise<void> {
    const sessionId = header(req.headers, 'mcp-session-id');
    if (sessionId !== undefined) {
      const live = this.sessions.get(sessionId) ?? (await this.resume(sessionId, identity, authInfo, this.nodeIconOrigin(req)));
      if (live === 'not_found') {
        jsonRpcError(res, 404, -32001, 'Session not found: it was closed, expired or never existed; start a new one with initialize');
        return;
      }
      if (live === 'unavailable') {
        jsonRpcError(res, 503, -32000, 'Unavailable: the broker store did not answer, so this session cannot be resumed here; retry shortly');
        return;
      }
      if (live === 'full') {
        this.tooManySessions(res, identity);
        return;
      }
      if (live === 'forbidden' || live.identityId !== identity.id) {
        jsonRpcError(res, 403, -32000, 'Forbidden: this session belongs to another identity');
        return;
      }
      live.lastUsed = Date.now();
      this.sessions.expires(identity.id, identity.expiresAt);
      if (live.shared) this.shared.used(sessionId, parsed);
      const status = await live.transport.handle(req, res, parsed, authInfo);
      if (req.method === 'GET' && status === 200 && live.untold) {
        for (const uri of live.untold) void live.session.server.sendResourceUpdated({ uri }).catch(() => {});
        live.untold = undefined;
      }
      return;
    }
    if (req.method !== 'POST') {
      jsonRpcError(res, 400, -32000, 'Bad request: no Mcp-Session-Id; open a session with an initialize POST');
      return;
    }
    if (parsed === undefined) {
      jsonRpcError(res, 400, -32700, `Parse error: ${body?.length ? 'the body is not JSON' : 'the body is empty'}`);
      return;
    }
    if (!isInitialize(parsed)) {
      jsonRpcError(res, 400, -32000, 'Bad request: no Mcp-Session-Id; open a session with initialize first');
      return;
    }
    if (!this.makeRoom(identity)) {
      this.tooManySessions(res, identity);
      return;
    }
    const release = this.sessions.reserve(identity.id, identity.expiresAt);
    try {
      const session = this.options.createSession(identity, 'legacy', this.nodeIconOrigin(req));
      const transport = await this.legacyTransport(session, randomUUID(), async (id) => {
        const shared = await this.shared.opened(id, identity.id, parsed);
        if (shared) this.shared.follow(id, session);
        this.sessions.add(id, { transport, session, identityId: identity.id, lastUsed: Date.now(), shared }, identity.expiresAt);
      });
      await transport.handle(req, res, parsed, authInfo);
    } finally {
      release();
    }
  }

  /** A transport for a 2025-era session with this id, connected to the session's server; `opened` runs when the initialize arrives. */
  private async legacyTransport(session: McpSession, sessionId: string, opened: (id: string) => Promise<void>): Promise<SessionTransport> {
    const transport = new SessionTransport({
      sessionId,
      onInitialized: opened,
      onDeleted: (id) => {
        // The client ended it (DELETE): no broker serves it again.
        if (this.sessions.get(id)?.shared) this.shared.ended([id]);
        this.sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId && this.sessions.get(transport.sessionId)?.transport === transport) this.sessions.delete(transport.sessionId);
      this.shared.forget(sessionId);
    };
    await session.server.connect(transport);
    return transport;
  }

  /**
   * A session this broker does not hold, from the store: another broker of
   * the cluster opened it (and died, or the client's address now leads
   * here), or this broker did before a restart. It is served again from
   * here with the same id, without a new initialize: the handshake is
   * replayed to a new server, the log level and subscriptions restored, and
   * the store told that this broker serves it now. An HTTP status instead
   * when it cannot be: unknown, ended or expired, another identity's, or
   * the store did not answer.
   */
  private resume(sessionId: string, identity: Identity, authInfo: AuthInfo, iconOrigin: string): Promise<LiveSession | ResumeRefusal> {
    let resuming = this.resuming.get(sessionId);
    if (!resuming) {
      resuming = this.resumeOnce(sessionId, identity, authInfo, iconOrigin).finally(() => this.resuming.delete(sessionId));
      this.resuming.set(sessionId, resuming);
    }
    return resuming;
  }

  private async resumeOnce(sessionId: string, identity: Identity, authInfo: AuthInfo, iconOrigin: string): Promise<LiveSession | ResumeRefusal> {
    let row: McpSessionRow | undefined;
    try {
      row = await this.shared.find(sessionId);
    } catch {
      return 'unavailable';
    }
    if (!row) return 'not_found';
    // The owner is known before anything is built: a session id alone takes nothing over.
    if (row.identityId !== identity.id) return 'forbidden';
    if (!this.makeRoom(identity)) return 'full';
    const release = this.sessions.reserve(identity.id, identity.expiresAt);
    try {
      return await this.rebuild(sessionId, row, identity, authInfo, iconOrigin);
    } finally {
      release();
    }
  }

  /** Serves a session from its row here: resumeOnce() once the row is known to be the identity's and it has room for it. */
  private async rebuild(
    sessionId: string,
    row: McpSessionRow,
    identity: Identity,
    authInfo: AuthInfo,
    iconOrigin: string,
  ): Promise<LiveSession | ResumeRefusal> {
    const session = this.options.createSession(identity, 'legacy', iconOrigin);
    const transport = await this.legacyTransport(session, sessionId, async () => {});
    let untold: string[];
    try {
      await replayHandshake(transport, row, authInfo);
      untold = await session.resubscribe(row.subscriptions);
      if (!(await this.shared.take(sessionId))) throw new Error('the session ended meanwhile');
    } catch (error) {
      this.options.log.warn('MCP session not resumed', { session: sessionId, error: (error as Error).message });
      await transport.close().catch(() => {});
      return error instanceof FleetError && error.code === 'unavailable' ? 'unavailable' : 'not_found';
    }
    this.shared.follow(sessionId, session);
    // A subscription its identity may no longer read is gone from the store too.
    if (untold.length < row.subscriptions.length) session.onSubscriptions?.(untold);
    const live: LiveSession = { transport, session, identityId: identity.id, lastUsed: Date.now(), shared: true, untold };
    this.sessions.add(sessionId, live, identity.expiresAt);
    this.options.log.info('MCP session resumed from the store', { session: sessionId, identity: identity.name });
    return live;
  }

  /** The identity a request's bearer token proves, or a 401 written to the response. */
  private async authenticate(req: IncomingMessage, res: ServerResponse): Promise<Identity | undefined> {
    const header = req.headers.authorization;
    const challenge = (error?: string, description?: string) =>
      [
        `Bearer realm="fleetmesh"`,
        `resource_metadata="${this.metadataUrl}"`,
        ...(error ? [`error="${error}"`, `error_description="${description}"`] : []),
      ].join(', ');
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) {
      jsonRpcError(res, 401, -32000, `Unauthorized: send Authorization: Bearer <token>. ${NEW_TOKEN_STEP}`, {
        'www-authenticate': challenge(),
      });
      return undefined;
    }
    const tokenHash = createHash('sha256')
      .update(match[1] ?? '')
      .digest('hex');
    try {
      const identity = await verifyBearerToken(this.options.store, match[1] ?? '');
      const now = Date.now();
      if (now - (this.touched.get(identity.id) ?? 0) > 60_000) {
        this.touched.set(identity.id, now);
        void this.options.store.identities.touch(identity.id, now).catch(() => {});
      }
      if (this.proven.size >= MAX_PROVEN_TOKENS) this.proven.clear();
      this.proven.set(tokenHash, identity);
      return identity;
    } catch (error) {
      const known = this.proven.get(tokenHash);
      if (error instanceof FleetError && error.code === 'unavailable') {
        if (known && known.expiresAt > Date.now()) return known;
        jsonRpcError(res, 503, -32000, `Unavailable: ${error.message}. ${error.hint}`, {});
        return undefined;
      }
      this.proven.delete(tokenHash);
      const reason = error instanceof TokenRefused ? error.message : 'the token could not be checked';
      const tokenId = parseIdentityToken(match[1] ?? '')?.id;
      this.options.refusals.record({
        source: req.socket.remoteAddress ?? 'unknown',
        tool: '/mcp',
        arguments: tokenId ? { token_id: tokenId } : {},
        errorCode: 'forbidden',
        reason: `bearer token refused: ${reason}`,
      });
      jsonRpcError(res, 401, -32000, `Unauthorized: ${reason}. ${NEW_TOKEN_STEP}`, { 'www-authenticate': challenge('invalid_token', reason) });
      return undefined;
    }
  }
}

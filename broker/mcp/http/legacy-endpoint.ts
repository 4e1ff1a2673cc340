import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Logger } from '../../../shared/log/logger.ts';
import type { Identity } from '../../auth/identities.ts';
import { ThrottledWarnings } from '../../limits/throttled-warnings.ts';
import type { BrokerStore } from '../../store/broker-store.ts';
import type { McpSession, McpSessionEra } from '../mcp-session.ts';
import { SharedSessions } from '../sessions/shared-sessions.ts';
import type { EdgeStep } from './edge-chain.ts';
import type { McpExchange } from './exchange.ts';
import { iconOrigin } from './icon-origin.ts';
import { sendJsonRpcError } from './json-answers.ts';
import { LiveSessions } from './live-sessions.ts';
import { isInitialize, isLegacy } from './mcp-request-kind.ts';
import { SessionResumption } from './session-resumption.ts';
import { header, SessionTransport } from './session-transport.ts';

export interface McpSessionLimits {
  /** 2025-era sessions one identity may hold on this broker at once. */
  perIdentity: number;
  /** A session (or 2026-era endpoint) unused for this long, with no stream open, is ended. */
  idleMs: number;
}

interface LegacyEndpointOptions {
  /** A 2025-era session of the identity; its icon URLs start with `iconOrigin`. */
  createSession(identity: Identity, era: McpSessionEra, iconOrigin: string | undefined): McpSession;
  /** The public URL, when set: icon URLs are built on its origin rather than the request's. */
  publicUrl: string | undefined;
  limits: McpSessionLimits;
  store: BrokerStore;
  log: Logger;
}

/** A session of an identity at its limit gives way to a new one once unused for this long, with no stream open. */
const RECLAIM_AFTER_MS = 60_000;

/**
 * The 2025-era side of /mcp: an initialize opens a session (one SDK
 * transport and server for its life), kept in the store too so that any
 * broker on it resumes a session it does not hold; every other request names
 * its session with Mcp-Session-Id and is answered 404 when it is unknown or
 * ended, 403 when it is another identity's. One identity holds at most
 * `limits.perIdentity` sessions here. Requests that are not 2025-era traffic
 * are handed on.
 */
export class LegacyEndpoint {
  private readonly sessions = new LiveSessions();
  /** 2025-era sessions in the store, which this broker resumes when a request names one it does not hold. */
  private readonly shared: SharedSessions;
  private readonly resumption: SessionResumption;
  /** Sessions refused to an identity at its limit are logged, at most 20 lines at once and 6 a minute. */
  private readonly refused: ThrottledWarnings;

  constructor(private readonly options: LegacyEndpointOptions) {
    this.shared = new SharedSessions(options.store, options.log, options.limits.idleMs);
    this.refused = new ThrottledWarnings(options.log, { burst: 20, perMinute: 6 });
    this.resumption = new SessionResumption({
      shared: this.shared,
      log: options.log,
      admit: (identity) => this.admit(identity),
      connect: async (identity, sessionId, origin) => {
        const session = options.createSession(identity, 'legacy', origin);
        return { session, transport: await this.transportFor(session, sessionId, async () => {}) };
      },
      add: (sessionId, live, expiresAt) => this.sessions.add(sessionId, live, expiresAt),
    });
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The sessions served here. */
  liveSessions(): McpSession[] {
    return [...this.sessions.values()].map((live) => live.session);
  }

  /**
   * Takes 2025-era traffic: a request naming a session this broker serves (a
   * session is 2025-era by its nature: no need to classify what its client
   * sends), or one the SDK's entry classifies as such.
   */
  readonly step: EdgeStep<McpExchange> = async (exchange, next) => {
    const held = header(exchange.req.headers, 'mcp-session-id');
    if ((held !== undefined && this.sessions.has(held)) || isLegacy(exchange.req, exchange.parsed)) return this.handle(exchange);
    await next(exchange);
  };

  /** Where icon URLs of a session opened by this request point: its Host header, already checked by the host guard. */
  private iconOriginOf(exchange: McpExchange): string {
    return iconOrigin(this.options.publicUrl, `http://${exchange.req.headers.host ?? 'localhost'}/`);
  }

  private async handle(exchange: McpExchange): Promise<void> {
    const { req, res, identity, authInfo, parsed } = exchange;
    const sessionId = header(req.headers, 'mcp-session-id');
    if (sessionId === undefined) return this.open(exchange);
    const live = this.sessions.get(sessionId) ?? (await this.resumption.resume(sessionId, identity, authInfo, this.iconOriginOf(exchange)));
    if (live === 'not_found') {
      sendJsonRpcError(res, 404, -32001, 'Session not found: it was closed, expired or never existed; start a new one with initialize');
      return;
    }
    if (live === 'unavailable') {
      sendJsonRpcError(res, 503, -32000, 'Unavailable: the broker store did not answer, so this session cannot be resumed here; retry shortly');
      return;
    }
    if (live === 'full') return this.tooManySessions(res, identity);
    if (live === 'forbidden' || live.identityId !== identity.id) {
      sendJsonRpcError(res, 403, -32000, 'Forbidden: this session belongs to another identity');
      return;
    }
    live.lastUsed = Date.now();
    this.sessions.expires(identity.id, identity.expiresAt);
    if (live.shared) this.shared.used(sessionId, parsed);
    const status = await live.transport.handle(req, res, parsed, authInfo);
    // A resumed session's client hears of each of its subscriptions once it opens its notification stream here.
    if (req.method === 'GET' && status === 200 && live.untold) {
      for (const uri of live.untold) void live.session.server.sendResourceUpdated({ uri }).catch(() => {});
      live.untold = undefined;
    }
  }

  /** A request without Mcp-Session-Id: an initialize POST opens a session, anything else is refused. */
  private async open(exchange: McpExchange): Promise<void> {
    const { req, res, identity, authInfo, body, parsed } = exchange;
    if (req.method !== 'POST') {
      sendJsonRpcError(res, 400, -32000, 'Bad request: no Mcp-Session-Id; open a session with an initialize POST');
      return;
    }
    if (parsed === undefined) {
      sendJsonRpcError(res, 400, -32700, `Parse error: ${body?.length ? 'the body is not JSON' : 'the body is empty'}`);
      return;
    }
    if (!isInitialize(parsed)) {
      sendJsonRpcError(res, 400, -32000, 'Bad request: no Mcp-Session-Id; open a session with initialize first');
      return;
    }
    const release = this.admit(identity);
    if (!release) return this.tooManySessions(res, identity);
    try {
      const session = this.options.createSession(identity, 'legacy', this.iconOriginOf(exchange));
      const transport = await this.transportFor(session, randomUUID(), async (id) => {
        const shared = await this.shared.opened(id, identity.id, parsed);
        if (shared) this.shared.follow(id, session);
        this.sessions.add(id, { transport, session, identityId: identity.id, lastUsed: Date.now(), shared }, identity.expiresAt);
      });
      await transport.handle(req, res, parsed, authInfo);
    } finally {
      release();
    }
  }

  /** A transport for a session with this id, connected to the session's server; `opened` runs when the initialize arrives. */
  private async transportFor(session: McpSession, sessionId: string, opened: (id: string) => Promise<void>): Promise<SessionTransport> {
    const transport = new SessionTransport({
      sessionId,
      onInitialized: opened,
      onDeleted: async (id) => {
        // The client ended it (DELETE): no broker serves it again, once the store says so (before the answer).
        const shared = this.sessions.get(id)?.shared;
        this.sessions.delete(id);
        if (shared) await this.shared.ended([id]);
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
   * Room for one more session of `identity`, counted until released; or
   * undefined when it holds all it may. At its limit, its session unused the
   * longest gives way, if that is RECLAIM_AFTER_MS or more with no stream open
   * (a client that never ends its sessions is not locked out until they
   * expire); a burst of new sessions is refused.
   */
  private admit(identity: Identity): (() => void) | undefined {
    if (this.sessions.countOf(identity.id) >= this.options.limits.perIdentity) {
      const reclaimed = this.sessions.reclaimable(identity.id, Date.now(), RECLAIM_AFTER_MS);
      if (reclaimed === undefined) return undefined;
      this.endSessions([reclaimed]);
    }
    return this.sessions.reserve(identity.id, identity.expiresAt);
  }

  /** The answer to a new session of an identity at its limit: what the limit is, and how to get under it. */
  private tooManySessions(res: ServerResponse, identity: Identity): void {
    const { perIdentity, idleMs } = this.options.limits;
    this.refused.warn('MCP session refused: the identity holds all the sessions it may', { identity: identity.name, sessions: perIdentity });
    sendJsonRpcError(
      res,
      429,
      -32000,
      `Too many sessions: identity "${identity.name}" already has ${perIdentity} MCP sessions open on this broker, the most one identity may, all used in the last ${RECLAIM_AFTER_MS / 1000} s. ` +
        `Reuse a session, or end those you no longer need (DELETE /mcp with their Mcp-Session-Id); one unused for ${RECLAIM_AFTER_MS / 1000} s gives way to a new one, and one unused for ${idleMs / 60_000} minutes ends by itself. ` +
        'An operator may raise --mcp-sessions-per-identity, or give each client an identity of its own.',
      { 'retry-after': String(RECLAIM_AFTER_MS / 1000) },
    );
  }

  /** Ends sessions for good (idle, given way, revoked): closed here, and gone from the store for every broker. */
  private endSessions(ids: readonly string[]): void {
    const shared: string[] = [];
    for (const id of ids) {
      const live = this.sessions.delete(id);
      if (!live) continue;
      if (live.shared) shared.push(id);
      void live.transport.close().catch(() => {});
    }
    if (shared.length) void this.shared.ended(shared);
  }

  /** The identities with sessions here whose expiry, as last known, has passed. */
  expiredBy(nowMs: number): string[] {
    return this.sessions.expiredBy(nowMs);
  }

  /** Records when an identity expires, as its row now says (it may have been extended). */
  expires(identityId: string, expiresAt: number): void {
    this.sessions.expires(identityId, expiresAt);
  }

  /** Ends the sessions of identities revoked or expired. */
  end(identityIds: Iterable<string>): void {
    this.endSessions([...identityIds].flatMap((identityId) => this.sessions.idsOf(identityId)));
  }

  /** Sessions another broker took over (or used) at or after `sinceMs`; rejects when the store does not answer. */
  movedSince(sinceMs: number): Promise<string[]> {
    return this.shared.movedSince(sinceMs);
  }

  /**
   * Closes the sessions that another broker serves now (or served last): it
   * alone tells them of changes. A client that still talks to this broker
   * resumes its session here.
   */
  closeMoved(ids: readonly string[]): void {
    for (const id of ids) {
      const live = this.sessions.get(id);
      if (!live?.shared) continue;
      this.sessions.delete(id);
      void live.transport.close().catch(() => {});
    }
  }

  /**
   * Ends the sessions unused for `idleMs`; one with a stream open is in use,
   * and the store is told so. Rows idle too long, whichever broker served
   * them, are pruned from the store.
   */
  closeIdle(nowMs: number, idleMs: number): void {
    const idle: string[] = [];
    for (const [id, live] of this.sessions.entries()) {
      if (live.transport.streaming) {
        live.lastUsed = nowMs;
        if (live.shared) this.shared.used(id, undefined);
      } else if (nowMs - live.lastUsed > idleMs) {
        idle.push(id);
      }
    }
    this.endSessions(idle);
    this.shared.prune();
  }

  /** Closes every session here (the broker stops); the store keeps them for another broker, or this one restarted. */
  async close(): Promise<void> {
    const transports = [...this.sessions.values()].map((live) => live.transport);
    this.sessions.clear();
    await Promise.all(transports.map((transport) => transport.close().catch(() => {})));
  }
}

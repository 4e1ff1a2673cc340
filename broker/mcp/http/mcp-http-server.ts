import type { Server, ServerResponse } from 'node:http';
import type { Logger } from '../../../shared/log/logger.ts';
import type { Identity } from '../../auth/identities.ts';
import type { ResourceServer } from '../../auth/oauth/resource-server.ts';
import { verifyBearer } from '../../auth/verify-bearer.ts';
import type { RefusalAudit } from '../../calls/refusal-audit.ts';
import { closeHttp, type HttpLimits, listenHttp } from '../../http/listen-http.ts';
import type { BrokerStore } from '../../store/broker-store.ts';
import { createIconRoutes } from '../icons/icon-routes.ts';
import type { McpSession, McpSessionEra } from '../mcp-session.ts';
import type { McpTasks } from '../tasks/mcp-tasks.ts';
import { bearerAuth } from './bearer-auth.ts';
import { DrainGate } from './drain-gate.ts';
import { EdgeChain, type EdgeStep } from './edge-chain.ts';
import type { Exchange } from './exchange.ts';
import { hostGuard } from './host-guard.ts';
import { sendJsonRpcError } from './json-answers.ts';
import { LegacyEndpoint, type McpSessionLimits } from './legacy-endpoint.ts';
import { MAX_BODY_BYTES } from './modern-endpoint.ts';
import { ModernEndpoints } from './modern-endpoints.ts';
import { type OpenRoute, openRoutes } from './open-routes.ts';
import { requestBody } from './request-body.ts';
import { SessionSweeps } from './session-sweeps.ts';
import { wellKnownDocuments } from './well-known.ts';

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
  /** How long a stopping broker lets the calls it took run before it cancels them. */
  stopGraceMs: number;
  store: BrokerStore;
  log: Logger;
  /**
   * A 2025-era session (`legacy`: one server for the session's life) or an identity's 2026-era endpoint (`modern`: a server per request).
   * `iconOrigin`: where the legacy session's icon URLs point (see icon-origin.ts).
   */
  createSession(identity: Identity, era: McpSessionEra, iconOrigin: string | undefined): McpSession;
  /** Where refused bearer tokens are audited. */
  refusals: RefusalAudit;
  /** The MCP tasks of every session, started and stopped with the server. */
  tasks: McpTasks;
  /** Extra routes (health, metrics) served without a bearer token, behind the same Host and Origin checks as /mcp. */
  routes?: Record<string, OpenRoute>;
}

/** How long the answers of the calls cancelled at the end of the stop grace get to go out before the sessions close. */
const CANCELLED_ANSWERS_MS = 2000;

/**
 * MCP over Streamable HTTP at /mcp, as a chain of small steps: the Host and
 * Origin allow-lists on every path (DNS rebinding), a stopping broker's gate,
 * the protected resource metadata, the built-in authorization server (with
 * --oauth builtin), the paths served without a token (health, metrics,
 * icons), then for /mcp a bearer token (an identity token, or with --oauth an
 * access token), the body, and the era
 * decided per request: 2025-era traffic (initialize, Mcp-Session-Id) to its
 * sessions, 2026-07-28 traffic (`server/discover`, the per-request `_meta`
 * envelope) to one stateless endpoint per identity.
 */
export class McpHttpServer {
  private server: Server | undefined;
  private readonly drain: DrainGate;
  private readonly legacy: LegacyEndpoint;
  private readonly modern: ModernEndpoints;
  private readonly sweeps: SessionSweeps;
  private readonly handle: (exchange: Exchange) => Promise<void>;
  port = 0;
  /**
   * OAuth at this edge (`--oauth`): the resource server access tokens go
   * through beside identity tokens, and the built-in authorization server's
   * mount. Set by the broker once the listener has its port, since the
   * built-in server's issuer is this listener's origin.
   */
  oauth: { resourceServer: ResourceServer; mount: EdgeStep<Exchange> | undefined } | undefined;

  constructor(private readonly options: McpHttpServerOptions) {
    const { store, log, publicUrl, createSession } = options;
    this.drain = new DrainGate(log);
    this.legacy = new LegacyEndpoint({ createSession, publicUrl, limits: options.sessionLimits, store, log });
    this.modern = new ModernEndpoints({ createSession, publicUrl, log });
    this.sweeps = new SessionSweeps({ store, legacy: this.legacy, modern: this.modern, idleMs: options.sessionLimits.idleMs });
    this.handle = EdgeChain.start<Exchange>()
      .use(hostGuard({ allowedHosts: options.allowedHosts, allowedOrigins: options.allowedOrigins, port: () => this.port, log }))
      .use(this.drain.routes)
      .use(
        wellKnownDocuments(
          () => this.url,
          () => this.oauth && { issuer: this.oauth.resourceServer.options.issuer, scopes: this.oauth.resourceServer.options.requiredScopes },
        ),
      )
      .use<Exchange>((exchange, next) => (this.oauth?.mount ? this.oauth.mount(exchange, next) : next(exchange)))
      .use(openRoutes({ ...createIconRoutes(), ...options.routes }))
      .use(
        bearerAuth({
          verify: (token) => verifyBearer(store, this.oauth?.resourceServer, token),
          touch: (identityId, nowMs) => store.identities.touch(identityId, nowMs),
          refusals: options.refusals,
          resourceUrl: () => this.url,
          scopes: () => this.oauth?.resourceServer.options.requiredScopes ?? [],
        }),
      )
      .use(requestBody({ maxBytes: MAX_BODY_BYTES, timeoutMs: options.httpLimits.bodyTimeoutMs }))
      .use(this.drain.mcp)
      .use(this.legacy.step)
      .end(this.modern.serve);
  }

  get url(): string {
    return this.options.publicUrl ?? `http://${this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host}:${this.port}/mcp`;
  }

  /** Every session that may be told of a change: 2025-era sessions and each identity's 2026-era endpoint. */
  liveSessions(): McpSession[] {
    return [...this.legacy.liveSessions(), ...this.modern.sessions()];
  }

  async start(): Promise<number> {
    const server = await listenHttp(
      this.options.host,
      this.options.port,
      this.options.httpLimits,
      (req, res) => this.handle({ req, res, url: new URL(req.url ?? '/', 'http://localhost') }),
      (error, res) => this.failed(error, res),
    );
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    this.options.tasks.start();
    this.sweeps.start();
    return this.port;
  }

  /**
   * Stops the orderly way: no new connection is taken and idle ones are
   * closed, so clients move on (a relay given several brokers opens its
   * session on the next one); a request that still arrives is refused with
   * 503, unhandled; the answers of requests already taken are sent, for up
   * to the stop grace. The tool calls still running then are cancelled, each
   * caller answered with an error result saying its call's outcome is
   * unknown, before the sessions and their connections close.
   */
  async stop(): Promise<void> {
    this.drain.close();
    this.sweeps.stop();
    const server = this.server;
    this.server = undefined;
    server?.close();
    server?.closeIdleConnections();
    if ((await this.drain.answersSent(this.options.stopGraceMs)) > 0) {
      const cancelled = this.liveSessions().reduce((count, session) => count + session.interruptCalls(), 0);
      if (cancelled > 0)
        this.options.log.warn('tool calls still running when the stop grace ended were cancelled, their outcome unknown', { calls: cancelled });
      await this.drain.answersSent(CANCELLED_ANSWERS_MS);
    }
    await this.options.tasks.stop();
    await this.legacy.close();
    await this.modern.close();
    await closeHttp(server);
  }

  /** A request no step answered because one of them failed: logged, and answered 500 if nothing was written yet. */
  private failed(error: unknown, res: ServerResponse): void {
    this.options.log.error('MCP request failed', { error: (error as Error).message });
    if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'internal error');
    else res.end();
  }
}

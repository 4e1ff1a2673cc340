import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { CATALOG } from '../../shared/catalog/catalog.ts';
import { FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import { auditPeopleOf, parseIdentityToken, TokenRefused, verifyBearerToken } from '../auth/identities.ts';
import type { ActionRunner } from '../calls/action-runner.ts';
import { decideApproval } from '../calls/approvals/decide-approval.ts';
import { closeHttp, type HttpLimits, hostAllowed, listenHttp } from '../http/listen-http.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import { ThrottledWarnings } from '../limits/throttled-warnings.ts';
import { RequestProgress, STILL_RUNNING_PROGRESS_MS } from '../mcp/request-progress.ts';
import { errorStructure } from '../mcp/tool-result.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { type AuditQuery, auditQuery } from './audit-query.ts';
import { ChangeStream } from './change-stream.ts';
import { ConsoleAdmin, type ConsoleAdminOptions } from './console-admin.ts';
import { ProgressLines } from './progress-lines.ts';
import type { SignInPages } from './sign-in-pages.ts';
import type { StaticAssets } from './static-assets.ts';
import { readJson, SECURITY_HEADERS, sendError, sendJson, statusOf } from './web-json.ts';
import { csrfMatches, sessionCookieName, type WebSession, WebSessions } from './web-sessions.ts';

export interface WebServerOptions {
  host: string;
  port: number;
  /** Host header values accepted (host:port); `*` accepts any. Default: the loopback names with the port. */
  allowedHosts: string[];
  /** Connections and request clocks of the listener, as MCP's. */
  httpLimits: HttpLimits;
  assets: StaticAssets;
  store: BrokerStore;
  registry: AgentRegistry;
  index: FleetIndex;
  runner: ActionRunner;
  enrollment: ConsoleAdminOptions['enrollment'];
  log: Logger;
}

const CSRF_HEADER = 'x-fleetmesh-csrf';
/** Where the event stream takes the CSRF token: a browser's EventSource cannot send headers. */
const CSRF_QUERY = 'csrf';

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function sessionCookie(origin: string, value: string, maxAgeS: number): string {
  const secure = new URL(origin).protocol === 'https:' ? ' Secure;' : '';
  return `${sessionCookieName(origin)}=${value}; Path=/;${secure} HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}`;
}

/**
 * The web console (`--web-listen`): the built console files, and a JSON API
 * behind a session. A browser signs in with an identity token once and then
 * holds two halves of its session: a random id in an HttpOnly, SameSite=Strict
 * cookie, and a CSRF token the page keeps in its origin's storage and sends in
 * a header with every request (in the query of the event stream). Browsers
 * send a host's cookies to every port of it, so the cookie alone is worth
 * nothing: a listener on another port that is handed it cannot read the CSRF
 * token, which only sign-in answers and which storage keeps per origin, port
 * included. The session is bound to the origin it was signed in from: its
 * cookie is named after that origin (`__Host-` over HTTPS, the port over plain
 * HTTP), and a request naming another Host or Origin does not find it. Every
 * call goes through the broker's action runner, so the console has the same
 * levels, grants, confirmation and audit as MCP. Host and Origin are checked
 * on every request as at /mcp.
 */
export class WebServer {
  private server: Server | undefined;
  private readonly sessions: WebSessions;
  private readonly changes: ChangeStream;
  private readonly refusedHosts: ThrottledWarnings;
  private readonly admin: ConsoleAdmin;
  port = 0;
  /** The built-in authorization server's sign-in pages, once the broker made it (`--oauth builtin`). */
  signInPages: SignInPages | undefined;

  constructor(private readonly options: WebServerOptions) {
    this.sessions = new WebSessions(options.store);
    this.changes = new ChangeStream(options.registry, options.index, this.sessions);
    this.refusedHosts = new ThrottledWarnings(options.log, { burst: 20, perMinute: 6 });
    this.admin = new ConsoleAdmin({
      store: options.store,
      refusals: options.runner.refusals,
      enrollment: options.enrollment,
      bodyTimeoutMs: options.httpLimits.bodyTimeoutMs,
    });
  }

  /** The console's origin, where the sign-in pages are. */
  get origin(): string {
    return this.url.slice(0, -1);
  }

  get url(): string {
    return `http://${this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host === '0.0.0.0' ? '127.0.0.1' : this.options.host}:${this.port}/`;
  }

  async start(): Promise<number> {
    if (!this.options.assets.built) {
      this.options.log.warn('the web console is not built: its pages answer 503 until `npm run build` makes them', { dir: this.options.assets.dir });
    }
    const server = await listenHttp(
      this.options.host,
      this.options.port,
      this.options.httpLimits,
      (req, res) => this.handle(req, res),
      (error, res) => {
        this.options.log.error('web console request failed', { error: (error as Error).message });
        if (!res.headersSent) sendError(res, 500, new FleetError('internal', 'the request failed'));
        else res.end();
      },
    );
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    this.changes.start();
    return this.port;
  }

  async stop(): Promise<void> {
    this.changes.stop();
    const server = this.server;
    this.server = undefined;
    await closeHttp(server);
  }

  private allowedHost(host: string | undefined): boolean {
    return hostAllowed(this.options.allowedHosts, this.port, host);
  }

  /** A browser's Origin must be this console itself: the Host it asked for, over http or https. */
  private allowedOrigin(origin: string | undefined, host: string | undefined): boolean {
    if (origin === undefined) return true;
    return host !== undefined && [`http://${host}`, `https://${host}`].includes(origin.toLowerCase());
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const host = req.headers.host?.toLowerCase();
    if (!this.allowedHost(host) || !this.allowedOrigin(req.headers.origin, host)) {
      this.refusedHosts.warn('web console request refused: Host or Origin not allowed', { path: url.pathname, host, origin: req.headers.origin });
      sendError(
        res,
        403,
        new FleetError('forbidden', 'the Host or Origin header is not allowed (DNS rebinding and cross-site protection; see --web-allowed-hosts)'),
      );
      return;
    }
    if (url.pathname.startsWith('/api/')) return this.api(req, res, url);
    if (url.pathname.startsWith('/oauth/') && (await this.signInPages?.handle(req, res, url, `http://${host}`))) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, 405, new FleetError('invalid_argument', `${req.method} is not allowed here`));
      return;
    }
    const asset = await this.options.assets.read(url.pathname);
    if (!asset) {
      const status = this.options.assets.built ? 404 : 503;
      res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
      res.end(status === 503 ? 'The web console is not built: run `npm run build` in the fleetmesh folder, then reload.\n' : 'Not found.\n');
      return;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': asset.contentType,
      'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : asset.body);
  }

  /**
   * The session a request names, when it comes from the origin the session was
   * signed in from: its cookie under that origin's name, the same Host, and
   * the same Origin when the request carries one.
   */
  private async sessionOf(req: IncomingMessage): Promise<{ id: string; session: WebSession } | undefined> {
    const host = req.headers.host?.toLowerCase();
    const origin = req.headers.origin?.toLowerCase();
    if (host === undefined || !URL.canParse(origin ?? `http://${host}`)) return undefined;
    for (const candidate of origin === undefined ? [`https://${host}`, `http://${host}`] : [origin]) {
      const id = cookie(req, sessionCookieName(candidate));
      const session = await this.sessions.get(id);
      if (id !== undefined && session && session.origin === new URL(candidate).origin) return { id, session };
    }
    return undefined;
  }

  private async api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const route = `${req.method} ${url.pathname}`;
    if (route === 'POST /api/session') return this.signIn(req, res);
    const found = await this.sessionOf(req);
    if (!found) {
      sendError(res, 401, new FleetError('forbidden', 'not signed in, or the session ended', { hint: 'Sign in again with an identity token.' }));
      return;
    }
    const { id: sessionId, session } = found;
    // Reads too: the cookie reaches every port of the host, the token only this origin's page.
    const sent = (req.headers[CSRF_HEADER] as string | undefined) ?? (route === 'GET /api/events' ? url.searchParams.get(CSRF_QUERY) : null) ?? undefined;
    if (!csrfMatches(session, sent)) {
      sendError(res, 403, new FleetError('forbidden', 'the request lacks this session’s CSRF token', { hint: 'Reload the console and try again.' }));
      return;
    }
    const decision = /^POST \/api\/approvals\/(ap-[0-9a-f]+)\/(approve|deny)$/.exec(route);
    if (decision) return this.decide(req, res, session, decision[1] ?? '', decision[2] === 'approve' ? 'approve' : 'deny');
    if (await this.admin.handle(route, req, res, session.identity)) return;
    switch (route) {
      case 'GET /api/session':
        return sendJson(res, 200, this.whoami(session));
      case 'DELETE /api/session':
        await this.sessions.close(sessionId);
        return sendJson(res, 200, { signed_out: true }, { 'set-cookie': sessionCookie(session.origin, '', 0) });
      case 'GET /api/events':
        return this.changes.serve(req, res, sessionId, session, SECURITY_HEADERS);
      case 'GET /api/audit':
        return this.audit(res, session, url);
      case 'GET /api/approvals':
        return this.approvals(res, session);
      case 'POST /api/call':
        return this.call(req, res, session);
      default:
        sendError(res, 404, new FleetError('not_found', `no such console API: ${route}`));
    }
  }

  private whoami(session: WebSession): Record<string, unknown> {
    const { identity } = session;
    const { runner } = this.options;
    return {
      identity: identity.name,
      level: identity.level,
      effective_level: runner.effectiveLevel(identity),
      tools: CATALOG.filter((action) => runner.allows(identity, action)).map((action) => ({ tool: action.tool, risk: action.risk, level: action.level })),
      audit: identity.level === 3,
      /** The join tokens and identities screens (console-admin.ts), which the server refuses to others. */
      admin: identity.level === 3,
      approvals: runner.approvals && runner.effectiveLevel(identity) >= 1,
    };
  }

  private async signIn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // No session yet, so no CSRF token: a JSON body (which a cross-site form cannot send without a preflight) and the Origin check above stand in.
    let token: unknown;
    try {
      token = (await readJson(req, this.options.httpLimits.bodyTimeoutMs)).token;
    } catch (error) {
      sendError(res, 400, toFleetError(error));
      return;
    }
    // The origin the page was served from (a browser always sends Origin with a POST), checked against Host above.
    const from = req.headers.origin ?? `http://${req.headers.host ?? ''}`;
    if (!URL.canParse(from)) {
      sendError(res, 400, new FleetError('invalid_argument', 'a sign-in needs a Host header naming the console'));
      return;
    }
    const origin = new URL(from).origin;
    try {
      if (typeof token !== 'string') throw new TokenRefused('no token was given');
      const identity = await verifyBearerToken(this.options.store, token.trim());
      const { id, session } = await this.sessions.open(identity, origin);
      // The CSRF token is handed out here only: the page keeps it, and nothing that holds just the cookie can ask for it again.
      sendJson(
        res,
        200,
        { ...this.whoami(session), csrf_token: session.csrfToken },
        { 'set-cookie': sessionCookie(origin, id, Math.floor((session.expiresAtMs - Date.now()) / 1000)) },
      );
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      const tokenId = typeof token === 'string' ? parseIdentityToken(token.trim())?.id : undefined;
      this.options.runner.refusals.record({
        source: req.socket.remoteAddress ?? 'unknown',
        tool: '/api/session',
        arguments: tokenId ? { token_id: tokenId } : {},
        errorCode: 'forbidden',
        reason: `console sign-in refused: ${error.message}`,
      });
      sendError(
        res,
        401,
        new FleetError('forbidden', `sign-in refused: ${error.message}`, {
          hint: 'Use the admin token `npm start` printed, or one from fleetmesh identity create NAME --level 0..3.',
        }),
      );
    }
  }

  /** The audit log, newest first, filtered as asked (audit-query.ts), for level-3 identities; others are told it does not exist. */
  private async audit(res: ServerResponse, session: WebSession, url: URL): Promise<void> {
    if (session.identity.level !== 3) {
      sendError(res, 404, new FleetError('not_found', 'no such console API: GET /api/audit'));
      return;
    }
    let query: AuditQuery;
    try {
      query = auditQuery(url);
    } catch (error) {
      sendError(res, 400, toFleetError(error));
      return;
    }
    sendJson(res, 200, { rows: await this.options.store.audit.recent(query) });
  }

  /**
   * The calls waiting for a second person, for identities of level 1 or more
   * while the broker asks for approvals: each says whether this identity may
   * decide it (not its own call, and one its level covers).
   */
  private async approvals(res: ServerResponse, session: WebSession): Promise<void> {
    const { identity } = session;
    const { runner } = this.options;
    const level = runner.effectiveLevel(identity);
    if (!runner.approvals || level < 1) {
      sendError(res, 404, new FleetError('not_found', 'no such console API: GET /api/approvals'));
      return;
    }
    const rows = await this.options.store.approvals.list({ pending: true, limit: 200, now: Date.now() });
    sendJson(res, 200, {
      rows: rows.map((row) => ({ ...row, may_decide: row.identityId !== identity.id && row.level <= level })),
    });
  }

  /** Approves or denies a waiting call as this identity; the decision is audited as its own row. */
  private async decide(req: IncomingMessage, res: ServerResponse, session: WebSession, id: string, decision: 'approve' | 'deny'): Promise<void> {
    const { identity } = session;
    const { runner } = this.options;
    if (!runner.approvals || runner.effectiveLevel(identity) < 1) {
      sendError(res, 404, new FleetError('not_found', `no such console API: POST /api/approvals/${id}/${decision}`));
      return;
    }
    try {
      const body = await readJson(req, this.options.httpLimits.bodyTimeoutMs);
      const reason = typeof body.reason === 'string' && body.reason.trim() !== '' ? body.reason.trim().slice(0, 500) : undefined;
      const row = await decideApproval(
        this.options.store,
        id,
        decision,
        { name: identity.name, identityId: identity.id, level: runner.effectiveLevel(identity), people: auditPeopleOf(identity) },
        reason,
      );
      sendJson(res, 200, { approval: row });
    } catch (error) {
      const failure = toFleetError(error);
      sendError(res, statusOf(failure), failure);
    }
  }

  /**
   * One tool call, by the tool's name on the individual surface, through the
   * same runner as MCP calls. A refusal or failure answers 200 with the error,
   * as an MCP tool error would: the console shows it (confirm_required lists
   * the targets to confirm). A request that accepts `application/x-ndjson`
   * hears the call's progress as MCP's progress notifications carry it (hosts
   * settled of hosts targeted, what just happened, what it waits for), one
   * `{"progress": …}` line each, then one `{"answer": …}` line.
   */
  private async call(req: IncomingMessage, res: ServerResponse, session: WebSession): Promise<void> {
    const { identity } = session;
    const { runner } = this.options;
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableEnded) controller.abort();
    });
    const stream = new ProgressLines(res, /\bapplication\/x-ndjson\b/i.test(req.headers.accept ?? ''));
    const progress = stream.wanted ? new RequestProgress(stream.progress, STILL_RUNNING_PROGRESS_MS) : undefined;
    try {
      const body = await readJson(req, this.options.httpLimits.bodyTimeoutMs);
      const tool = body.tool;
      const args = body.args ?? {};
      if (typeof tool !== 'string' || args === null || typeof args !== 'object' || Array.isArray(args)) {
        throw new FleetError('invalid_argument', 'a call is {tool: string, args: object}');
      }
      const action = CATALOG.find((candidate) => candidate.tool === tool);
      if (!action || !runner.allows(identity, action)) {
        // A tool above this identity is answered as one that does not exist, and audited as MCP audits it.
        if (action) await runner.auditHiddenCall(identity, tool, action, args as Record<string, unknown>);
        throw new FleetError('not_found', `unknown tool: ${tool}`, { hint: 'The console lists the tools this identity may use.' });
      }
      const result = await runner.run(identity, action, args as Record<string, unknown>, {
        tool,
        signal: controller.signal,
        ...(progress
          ? {
              onProgress: progress.report,
              onApproval: (waiting: string | undefined) => {
                if (waiting !== undefined) progress.say(waiting);
              },
            }
          : {}),
      });
      progress?.stop();
      stream.answer({ structured: result.structured, is_error: result.isError });
    } catch (error) {
      progress?.stop();
      const failure = toFleetError(error);
      // A body refused unread is the connection's, not the call's: its own status, and the connection closed.
      if (typeof failure.details?.httpStatus === 'number') return sendError(res, 400, failure);
      stream.answer({ ...errorStructure(failure), is_error: true });
    }
  }
}

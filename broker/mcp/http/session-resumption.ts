import type { AuthInfo } from '@modelcontextprotocol/server';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { Identity } from '../../auth/identities.ts';
import type { McpSessionRow } from '../../store/mcp-sessions-table.ts';
import type { McpSession } from '../mcp-session.ts';
import { replayHandshake } from '../sessions/replay-handshake.ts';
import type { SharedSessions } from '../sessions/shared-sessions.ts';
import type { LiveSession } from './live-sessions.ts';
import type { SessionTransport } from './session-transport.ts';

/** Why a session named by a request cannot be served here ('full': its identity holds all the sessions it may). */
export type ResumeRefusal = 'not_found' | 'forbidden' | 'unavailable' | 'full';

/** What resumption asks of the 2025-era endpoint it serves. */
interface ResumptionHost {
  shared: SharedSessions;
  log: Logger;
  /** Room for one more session of the identity, held until released; undefined when it has none. */
  admit(identity: Identity): (() => void) | undefined;
  /** A new session of the identity with a transport of this id, connected (no initialize has reached it). */
  connect(identity: Identity, sessionId: string, iconOrigin: string): Promise<{ session: McpSession; transport: SessionTransport }>;
  /** Serves the session from now on. */
  add(sessionId: string, live: LiveSession, expiresAt: number): void;
}

/**
 * Sessions this broker does not hold, served from the store: another broker
 * of the cluster opened one (and died, or the client's address now leads
 * here), or this broker did before a restart. Each is served again from here
 * with the same id, without a new initialize: the handshake is replayed to a
 * new server, the log level and subscriptions restored, and the store told
 * that this broker serves it now. Requests that name one at once wait for
 * the same resumption.
 */
export class SessionResumption {
  private readonly resuming = new Map<string, Promise<LiveSession | ResumeRefusal>>();

  constructor(private readonly host: ResumptionHost) {}

  /**
   * The session, served here from now on; or why it cannot be: unknown, ended
   * or expired, another identity's, its identity at its limit, or the store
   * did not answer.
   */
  resume(sessionId: string, identity: Identity, authInfo: AuthInfo, iconOrigin: string): Promise<LiveSession | ResumeRefusal> {
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
      row = await this.host.shared.find(sessionId);
    } catch {
      return 'unavailable';
    }
    if (!row) return 'not_found';
    // The owner is known before anything is built: a session id alone takes nothing over.
    if (row.identityId !== identity.id) return 'forbidden';
    const release = this.host.admit(identity);
    if (!release) return 'full';
    try {
      return await this.rebuild(sessionId, row, identity, authInfo, iconOrigin);
    } finally {
      release();
    }
  }

  /** Serves a session from its row here, once the row is known to be the identity's and it has room for it. */
  private async rebuild(
    sessionId: string,
    row: McpSessionRow,
    identity: Identity,
    authInfo: AuthInfo,
    iconOrigin: string,
  ): Promise<LiveSession | ResumeRefusal> {
    const { shared, log } = this.host;
    const { session, transport } = await this.host.connect(identity, sessionId, iconOrigin);
    let untold: string[];
    try {
      await replayHandshake(transport, row, authInfo);
      untold = await session.resubscribe(row.subscriptions);
      if (!(await shared.take(sessionId))) throw new Error('the session ended meanwhile');
    } catch (error) {
      log.warn('MCP session not resumed', { session: sessionId, error: (error as Error).message });
      await transport.close().catch(() => {});
      return error instanceof FleetError && error.code === 'unavailable' ? 'unavailable' : 'not_found';
    }
    shared.follow(sessionId, session);
    // A subscription its identity may no longer read is gone from the store too.
    if (untold.length < row.subscriptions.length) session.onSubscriptions?.(untold);
    const live: LiveSession = { transport, session, identityId: identity.id, lastUsed: Date.now(), shared: true, untold };
    this.host.add(sessionId, live, identity.expiresAt);
    log.info('MCP session resumed from the store', { session: sessionId, identity: identity.name });
    return live;
  }
}

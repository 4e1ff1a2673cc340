import { randomUUID } from 'node:crypto';
import { isSpecType } from '@modelcontextprotocol/server';
import type { Logger } from '../../../shared/log/logger.ts';
import type { BrokerStore } from '../../store/broker-store.ts';
import type { McpSessionRow } from '../../store/mcp-sessions-table.ts';
import type { McpSession } from '../mcp-session.ts';

/** How often a session in use records it in the store: a busy client does not write on every request. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * The store's side of 2025-era MCP sessions: each session is written there
 * when it opens and kept current (subscriptions, log level, last use), so
 * that another broker on the same store, or this one restarted, can serve it
 * again. The row names the broker process serving it (`holder`, new for each
 * process): a broker that takes a session over writes its own, and one that
 * served it before closes its copy when it sees that (`held`), so no session
 * is live, and told of changes, on two brokers for long.
 */
export class SharedSessions {
  /** This broker process, as the rows it serves name it. */
  readonly holder = randomUUID();
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly store: BrokerStore,
    private readonly log: Logger,
    /** A session nobody used for this long is gone. */
    private readonly idleMs: number,
  ) {}

  /**
   * Records a session that an initialize just opened, with what the client
   * said in it. Resolves false when the store did not take it: the session
   * then lives on this broker only, as it would without a shared store.
   */
  async opened(sessionId: string, identityId: string, initialize: unknown): Promise<boolean> {
    const params = (initialize as { params?: { protocolVersion?: unknown; clientInfo?: unknown; capabilities?: unknown } }).params ?? {};
    const now = Date.now();
    try {
      await this.store.mcpSessions.insert({
        sessionId,
        identityId,
        protocolVersion: typeof params.protocolVersion === 'string' ? params.protocolVersion : '',
        clientInfo: params.clientInfo,
        clientCapabilities: params.capabilities,
        heldBy: this.holder,
        createdAt: now,
        lastUsedAt: now,
      });
      this.touched.set(sessionId, now);
      return true;
    } catch (error) {
      this.log.warn('MCP session not recorded in the store: it cannot move to another broker', { error: (error as Error).message });
      return false;
    }
  }

  /** Keeps the session's subscriptions current in the store from now on. */
  follow(sessionId: string, session: McpSession): void {
    session.onSubscriptions = (uris) => this.write('subscriptions', this.store.mcpSessions.setSubscriptions(sessionId, uris));
  }

  /** A request on a live session: its use (now and then) and a log level it sets go to the store. */
  used(sessionId: string, body: unknown): void {
    const now = Date.now();
    if (now - (this.touched.get(sessionId) ?? 0) > TOUCH_INTERVAL_MS) {
      this.touched.set(sessionId, now);
      this.write('last use', this.store.mcpSessions.touch(sessionId, now));
    }
    for (const message of Array.isArray(body) ? body : [body]) {
      const setsLevel = (message as { method?: unknown } | null)?.method === 'logging/setLevel' && isSpecType.SetLevelRequest(message);
      if (setsLevel) this.write('log level', this.store.mcpSessions.setLogLevel(sessionId, message.params.level));
    }
  }

  /** The session as the store has it, if it exists and has not been idle too long; rejects when the store does not answer. */
  find(sessionId: string): Promise<McpSessionRow | undefined> {
    return this.store.mcpSessions.get(sessionId, Date.now() - this.idleMs);
  }

  /** Makes this broker the one serving the session; resolves false when it is gone meanwhile. */
  async take(sessionId: string): Promise<boolean> {
    const now = Date.now();
    const taken = await this.store.mcpSessions.take(sessionId, this.holder, now);
    if (taken) this.touched.set(sessionId, now);
    return taken;
  }

  /** Sessions another broker took over (or used) at or after `sinceMs`: those of them open here are not ours any more. */
  movedSince(sinceMs: number): Promise<string[]> {
    return this.store.mcpSessions.movedSince(this.holder, sinceMs);
  }

  /**
   * Sessions that ended for good (deleted by the client, idle, revoked): no
   * broker may serve them again. Resolves once the store says so, so that a
   * DELETE answered means ended for every broker.
   */
  ended(sessionIds: readonly string[]): Promise<void> {
    for (const id of sessionIds) this.touched.delete(id);
    return this.write('end', this.store.mcpSessions.delete(sessionIds));
  }

  /** Deletes the rows of sessions idle too long or whose identity is revoked, whichever broker served them. */
  prune(): void {
    const now = Date.now();
    this.write('prune', this.store.mcpSessions.prune(now - this.idleMs, now));
  }

  /** The session on this broker no longer (another one took it over): forget when it was touched. */
  forget(sessionId: string): void {
    this.touched.delete(sessionId);
  }

  private write(what: string, done: Promise<unknown>): Promise<void> {
    return done.then(
      () => {},
      (error: unknown) => this.log.warn(`MCP session ${what} not recorded in the store`, { error: (error as Error).message }),
    );
  }
}

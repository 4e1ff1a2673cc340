import type { McpSession } from '../mcp-session.ts';
import type { SessionTransport } from './session-transport.ts';

/** A 2025-era MCP session this broker serves. */
export interface LiveSession {
  transport: SessionTransport;
  session: McpSession;
  identityId: string;
  lastUsed: number;
  /** Whether the store has the session, so another broker may take it over. */
  shared: boolean;
  /**
   * A resumed session's subscriptions: what changed while no broker served
   * it is unknown, so each is told as updated once its client opens a
   * notification stream here (a needless re-read rather than a missed change).
   */
  untold?: string[];
}

interface IdentitySessions {
  ids: Set<string>;
  /** Sessions being opened: counted from the check that allowed them until they are live. */
  opening: number;
  /** When the identity expires, as its last request here found it. */
  expiresAt: number;
}

/**
 * The 2025-era sessions open on this broker, by id and by identity: what an
 * identity holds, for its limit, and when it expires, so that a sweep finds
 * the sessions to end by identity without visiting every session.
 */
export class LiveSessions {
  private readonly byId = new Map<string, LiveSession>();
  private readonly byIdentity = new Map<string, IdentitySessions>();

  get size(): number {
    return this.byId.size;
  }

  get(sessionId: string): LiveSession | undefined {
    return this.byId.get(sessionId);
  }

  has(sessionId: string): boolean {
    return this.byId.has(sessionId);
  }

  values(): IterableIterator<LiveSession> {
    return this.byId.values();
  }

  entries(): IterableIterator<[string, LiveSession]> {
    return this.byId.entries();
  }

  private identity(identityId: string, expiresAt: number): IdentitySessions {
    let held = this.byIdentity.get(identityId);
    if (!held) {
      held = { ids: new Set(), opening: 0, expiresAt };
      this.byIdentity.set(identityId, held);
    }
    return held;
  }

  private forgetIdle(identityId: string, held: IdentitySessions): void {
    if (held.ids.size === 0 && held.opening === 0) this.byIdentity.delete(identityId);
  }

  add(sessionId: string, live: LiveSession, expiresAt: number): void {
    this.delete(sessionId);
    this.byId.set(sessionId, live);
    this.identity(live.identityId, expiresAt).ids.add(sessionId);
  }

  /** Forgets a session (its transport is the caller's to close); the session it was, if any. */
  delete(sessionId: string): LiveSession | undefined {
    const live = this.byId.get(sessionId);
    if (!live) return undefined;
    this.byId.delete(sessionId);
    const held = this.byIdentity.get(live.identityId);
    if (held) {
      held.ids.delete(sessionId);
      this.forgetIdle(live.identityId, held);
    }
    return live;
  }

  clear(): void {
    this.byId.clear();
    this.byIdentity.clear();
  }

  /** The ids of an identity's live sessions. */
  idsOf(identityId: string): string[] {
    return [...(this.byIdentity.get(identityId)?.ids ?? [])];
  }

  /** The sessions an identity has, live or being opened. */
  countOf(identityId: string): number {
    const held = this.byIdentity.get(identityId);
    return held ? held.ids.size + held.opening : 0;
  }

  /**
   * Counts a session the identity is opening until `release()`: requests
   * that open sessions at once each see the others, and together they stay
   * within the limit.
   */
  reserve(identityId: string, expiresAt: number): () => void {
    const held = this.identity(identityId, expiresAt);
    held.opening += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.opening -= 1;
      this.forgetIdle(identityId, held);
    };
  }

  /**
   * The session of an identity that may give way to a new one: the one unused
   * the longest, if it went unused for `afterMs` or more with no stream open.
   */
  reclaimable(identityId: string, nowMs: number, afterMs: number): string | undefined {
    let oldest: { id: string; lastUsed: number } | undefined;
    for (const id of this.idsOf(identityId)) {
      const live = this.byId.get(id);
      if (!live || live.transport.streaming || nowMs - live.lastUsed < afterMs) continue;
      if (!oldest || live.lastUsed < oldest.lastUsed) oldest = { id, lastUsed: live.lastUsed };
    }
    return oldest?.id;
  }

  /** Records when an identity expires, as a request just proved it (its row may have been extended). */
  expires(identityId: string, expiresAt: number): void {
    const held = this.byIdentity.get(identityId);
    if (held) held.expiresAt = expiresAt;
  }

  /** The identities with sessions here whose expiry, as last known, has passed. */
  expiredBy(nowMs: number): string[] {
    return [...this.byIdentity].filter(([, held]) => held.expiresAt <= nowMs && held.ids.size > 0).map(([identityId]) => identityId);
  }
}

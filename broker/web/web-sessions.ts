import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Identity } from '../auth/identities.ts';
import type { BrokerStore } from '../store/broker-store.ts';

/** A signed-in browser: the identity its token proved, and the token its mutating requests must echo. */
export interface WebSession {
  identity: Identity;
  csrfToken: string;
  expiresAtMs: number;
}

/** A console session lasts a working day, and never past its identity's expiry. */
const SESSION_LIFETIME_MS = 12 * 3_600_000;
/** Sessions held at once; past it the oldest goes (a browser that signs in again gets a new one). */
const MAX_SESSIONS = 10_000;

/**
 * The console's sign-ins, in memory: a browser holds only a random session id
 * in an HttpOnly cookie; the identity token it signed in with is never kept.
 * A session ends when its identity is revoked or expires, checked on each use.
 */
export class WebSessions {
  private readonly sessions = new Map<string, WebSession>();

  constructor(private readonly store: BrokerStore) {}

  open(identity: Identity, now = Date.now()): { id: string; session: WebSession } {
    if (this.sessions.size >= MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    const id = randomBytes(32).toString('base64url');
    const session = { identity, csrfToken: randomBytes(32).toString('base64url'), expiresAtMs: Math.min(now + SESSION_LIFETIME_MS, identity.expiresAt) };
    this.sessions.set(id, session);
    return { id, session };
  }

  /** The live session a cookie names, or undefined (unknown, expired, or its identity revoked since). */
  async get(id: string | undefined, now = Date.now()): Promise<WebSession | undefined> {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const row = await this.store.identities.get(session.identity.id);
    if (session.expiresAtMs <= now || !row || row.revokedAt !== null || row.expiresAt <= now) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  close(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(id);
  }

  clear(): void {
    this.sessions.clear();
  }
}

/** Whether a request's CSRF header carries the session's token (constant time). */
export function csrfMatches(session: WebSession, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}

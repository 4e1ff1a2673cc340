import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Identity } from '../auth/identities.ts';
import type { BrokerStore } from '../store/broker-store.ts';

/** A signed-in browser: the identity its token proved, the token its requests must echo, and where it signed in. */
export interface WebSession {
  identity: Identity;
  csrfToken: string;
  expiresAtMs: number;
  /** The console's origin as the browser signed in from it (`http://127.0.0.1:7401`): the session answers there only. */
  origin: string;
}

/** A console session lasts a working day, and never past its identity's expiry. */
const SESSION_LIFETIME_MS = 12 * 3_600_000;
/**
 * Sessions one identity holds at once: a few browsers on a few machines. Past
 * it that identity's oldest session ends; another identity's never does, so
 * whoever holds a token can sign in as often as they like and log out no one
 * but themselves (a level-0 token signing in 10,000 times once logged the
 * admin out). The sessions held are bounded by the identities the operator made.
 */
export const MAX_SESSIONS_PER_IDENTITY = 20;

/**
 * The console's sign-ins, in memory: a browser holds only a random session id
 * in an HttpOnly cookie; the identity token it signed in with is never kept.
 * A session ends when its identity is revoked or expires, checked on each use.
 */
export class WebSessions {
  private readonly sessions = new Map<string, WebSession>();
  /** Each identity's session ids, oldest first. */
  private readonly byIdentity = new Map<string, Set<string>>();

  constructor(private readonly store: BrokerStore) {}

  open(identity: Identity, origin: string, now = Date.now()): { id: string; session: WebSession } {
    let own = this.byIdentity.get(identity.id);
    if (!own) {
      own = new Set();
      this.byIdentity.set(identity.id, own);
    }
    while (own.size >= MAX_SESSIONS_PER_IDENTITY) {
      const oldest = own.values().next().value;
      if (oldest === undefined) break;
      this.close(oldest);
    }
    const id = randomBytes(32).toString('base64url');
    const session = {
      identity,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAtMs: Math.min(now + SESSION_LIFETIME_MS, identity.expiresAt),
      origin,
    };
    this.sessions.set(id, session);
    own.add(id);
    return { id, session };
  }

  /** The live session a cookie names, or undefined (unknown, expired, or its identity revoked since). */
  async get(id: string | undefined, now = Date.now()): Promise<WebSession | undefined> {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const row = await this.store.identities.get(session.identity.id);
    if (session.expiresAtMs <= now || !row || row.revokedAt !== null || row.expiresAt <= now) {
      this.close(id);
      return undefined;
    }
    return session;
  }

  close(id: string | undefined): void {
    if (id === undefined) return;
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    const own = this.byIdentity.get(session.identity.id);
    own?.delete(id);
    if (own?.size === 0) this.byIdentity.delete(session.identity.id);
  }

  clear(): void {
    this.sessions.clear();
    this.byIdentity.clear();
  }
}

/**
 * The name of the session cookie for a console origin. Over HTTPS it is
 * `__Host-` prefixed: a browser takes it only with Secure, Path=/ and no
 * Domain, from that host itself. Over plain HTTP a browser keeps and sends
 * cookies by host whatever the port, so the name carries the port: two
 * consoles on one host keep their own, and a session is looked up only under
 * the name of the origin it was signed in from.
 */
export function sessionCookieName(origin: string): string {
  const url = new URL(origin);
  if (url.protocol === 'https:') return '__Host-fleetmesh_session';
  return `fleetmesh_session_${url.port || '80'}`;
}

/** Whether a request's CSRF header carries the session's token (constant time). */
export function csrfMatches(session: WebSession, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}

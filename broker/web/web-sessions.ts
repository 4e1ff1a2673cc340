import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Identity, liveIdentity } from '../auth/identities.ts';
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
 * The console's sign-ins, in the store, so every broker sharing it knows them
 * (a console user stays signed in across a broker's restart, and behind a
 * load balancer whichever broker takes a request): a browser holds only a
 * random session id in an HttpOnly cookie, which the store keeps as a hash;
 * the identity token it signed in with is never kept. A session ends when its
 * identity is revoked or expires, checked on each use.
 */
export class WebSessions {
  /** Counts this broker's sign-ins, ordering those of the same millisecond. */
  private opened = 0;

  constructor(private readonly store: BrokerStore) {}

  async open(identity: Identity, origin: string, now = Date.now()): Promise<{ id: string; session: WebSession }> {
    const id = randomBytes(32).toString('base64url');
    const session = {
      identity,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAtMs: Math.min(now + SESSION_LIFETIME_MS, identity.expiresAt),
      origin,
    };
    this.opened += 1;
    await this.store.webSessions.insert(
      {
        idSha256: hashOf(id),
        identityId: identity.id,
        csrfToken: session.csrfToken,
        origin,
        openedAt: now,
        openedSeq: this.opened,
        expiresAt: session.expiresAtMs,
      },
      MAX_SESSIONS_PER_IDENTITY,
      now,
    );
    return { id, session };
  }

  /** The live session a cookie names, or undefined (unknown, expired, or its identity revoked since). */
  async get(id: string | undefined, now = Date.now()): Promise<WebSession | undefined> {
    if (id === undefined) return undefined;
    const row = await this.store.webSessions.get(hashOf(id), now);
    if (!row) return undefined;
    const identity = await liveIdentity(this.store, row.identityId, now);
    if (!identity) {
      await this.close(id);
      return undefined;
    }
    return {
      identity,
      csrfToken: row.csrfToken,
      expiresAtMs: row.expiresAt,
      origin: row.origin,
    };
  }

  async close(id: string | undefined): Promise<void> {
    if (id !== undefined) await this.store.webSessions.delete(hashOf(id));
  }
}

/** How the store knows a session id: never the id itself, which signs a browser in. */
function hashOf(id: string): string {
  return createHash('sha256').update(id).digest('hex');
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

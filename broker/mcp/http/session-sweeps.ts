import type { BrokerStore } from '../../store/broker-store.ts';
import type { LegacyEndpoint } from './legacy-endpoint.ts';
import type { ModernEndpoints } from './modern-endpoints.ts';

interface SessionSweepsOptions {
  store: BrokerStore;
  legacy: LegacyEndpoint;
  modern: ModernEndpoints;
  /** A session or endpoint unused for this long, with no stream open, is ended. */
  idleMs: number;
}

/** How often the store is asked what changed for the sessions here: a revocation (on any broker sharing the store) ends them within this. */
const REVOCATION_CHECK_MS = 1000;
/**
 * How far back each of those rounds reads from the last one's start: the
 * clocks of brokers and of the CLI that revokes differ a little, and a write
 * commits after the time it carries.
 */
const STORE_CLOCK_MARGIN_MS = 5000;

/**
 * The rounds that end what should no longer be served: once a second, the
 * sessions and 2026-era endpoints of identities revoked or expired since they
 * opened, and the sessions another broker took over; every half idle time (at
 * most a minute), those unused for the idle time.
 */
export class SessionSweeps {
  private idleTimer: NodeJS.Timeout | undefined;
  private revocationTimer: NodeJS.Timeout | undefined;
  private checking = false;
  /** When the last round of the revocation sweep began: the next one reads what changed since. */
  private sweptMs = Date.now();

  constructor(private readonly options: SessionSweepsOptions) {}

  start(): void {
    this.idleTimer = setInterval(() => this.closeIdle(), Math.min(60_000, this.options.idleMs / 2));
    this.idleTimer.unref();
    this.revocationTimer = setInterval(() => {
      // One round at a time: a slow store must not pile rounds up.
      if (this.checking) return;
      this.checking = true;
      void this.closeRevoked().finally(() => {
        this.checking = false;
      });
    }, REVOCATION_CHECK_MS);
    this.revocationTimer.unref();
  }

  stop(): void {
    clearInterval(this.idleTimer);
    clearInterval(this.revocationTimer);
  }

  /** Ends the sessions and endpoints unused for the idle time. */
  closeIdle(nowMs = Date.now()): void {
    this.options.legacy.closeIdle(nowMs, this.options.idleMs);
    this.options.modern.closeIdle(nowMs, this.options.idleMs);
  }

  /**
   * One round of the revocation sweep. It reads only what changed since the
   * last one (identities revoked, session rows moved) and the rows of
   * identities whose expiry passed, so its cost follows the changes, not the
   * number of sessions open; a round with nothing open reads nothing.
   */
  async closeRevoked(): Promise<void> {
    const { store, legacy, modern } = this.options;
    const startedMs = Date.now();
    if (legacy.size === 0 && modern.size === 0) {
      this.sweptMs = startedMs;
      return;
    }
    const since = this.sweptMs - STORE_CLOCK_MARGIN_MS;
    let revoked: string[];
    let moved: string[];
    try {
      [revoked, moved] = await Promise.all([store.identities.revokedSince(since), legacy.movedSince(since)]);
    } catch {
      // The store did not answer: the next round reads from the same point.
      return;
    }
    this.sweptMs = startedMs;
    const ending = new Set(revoked);
    for (const identityId of await this.expired(startedMs)) ending.add(identityId);
    for (const identityId of ending) modern.end(identityId);
    legacy.end(ending);
    legacy.closeMoved(moved);
  }

  /**
   * The identities with sessions or an endpoint here whose expiry, as last
   * known, has passed and whose row confirms it (it may have been extended
   * since, which the next request would have told).
   */
  private async expired(nowMs: number): Promise<string[]> {
    const { store, legacy, modern } = this.options;
    const candidates = new Set([...legacy.expiredBy(nowMs), ...modern.expiredBy(nowMs)]);
    const expired: string[] = [];
    for (const identityId of candidates) {
      let row: Awaited<ReturnType<BrokerStore['identities']['get']>>;
      try {
        row = await store.identities.get(identityId);
      } catch {
        continue;
      }
      if (row && row.revokedAt === null && row.expiresAt > nowMs) {
        legacy.expires(identityId, row.expiresAt);
        modern.expires(identityId, row.expiresAt);
      } else {
        expired.push(identityId);
      }
    }
    return expired;
  }
}

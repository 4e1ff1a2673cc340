import { randomUUID } from 'node:crypto';
import { type RateLimit, RateLimiter } from '../limits/rate-limiter.ts';
import type { AuditPeople } from '../store/audit-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';

/** Something the broker refused, as the audit records it. */
interface Refusal {
  /** The identity that was refused, when it proved one. */
  identity?: string;
  /** The person and client behind it, and who decided on an approval. */
  people?: AuditPeople;
  /** Where a stranger (no identity proven) came from. */
  source?: string;
  tool: string;
  /** The action id, when the call named one. */
  action?: string;
  level?: number;
  targets?: string[];
  targetIds?: string[];
  arguments?: Record<string, unknown>;
  errorCode: string;
  reason: string;
}

/** Arguments longer than this (as JSON) are kept as their length only: a refusal row stays small. */
const MAX_ARGUMENTS_JSON = 4096;

/** Counts of left-out rows kept at most for this many callers; past it they start afresh. */
const MAX_COUNTED_CALLERS = 10_000;

/**
 * Writes refusals to the audit, at a bounded rate per identity or source, so
 * whoever probes the broker cannot fill its disk. Past the limit, one row says
 * that refusals are being left out, and the next row written says how many were.
 */
export class RefusalAudit {
  private readonly limiter: RateLimiter;
  private readonly leftOut = new Map<string, number>();

  constructor(
    private readonly store: BrokerStore,
    private readonly limit: RateLimit,
  ) {
    this.limiter = new RateLimiter(limit);
  }

  /** Resolves once the row is written, or could not be (a store that does not answer loses refusals, never calls). */
  async record(refusal: Refusal, nowMs = Date.now()): Promise<void> {
    const who = refusal.identity ? `identity ${refusal.identity}` : `source ${refusal.source ?? 'unknown'}`;
    if (!this.limiter.take(who, nowMs).allowed) {
      const count = (this.leftOut.get(who) ?? 0) + 1;
      if (this.leftOut.size >= MAX_COUNTED_CALLERS && count === 1) this.leftOut.clear();
      this.leftOut.set(who, count);
      if (count === 1) {
        await this.write(
          { ...refusal, reason: `more than ${this.limit.perMinute} refusals a minute of ${who}: further ones are counted, not written, for now` },
          nowMs,
        );
      }
      return;
    }
    const skipped = this.leftOut.get(who) ?? 0;
    this.leftOut.delete(who);
    await this.write(skipped ? { ...refusal, reason: `${refusal.reason} (${skipped} refusals of ${who} left out before this one)` } : refusal, nowMs);
  }

  private async write(refusal: Refusal, nowMs: number): Promise<void> {
    const argumentsJson = JSON.stringify(refusal.arguments ?? {});
    await this.store.audit
      .begin({
        callId: randomUUID(),
        startedAt: nowMs,
        identity: refusal.identity ?? '',
        source: refusal.source ?? null,
        tool: refusal.tool,
        action: refusal.action ?? '',
        level: refusal.level ?? 0,
        targets: refusal.targets ?? [],
        targetIds: refusal.targetIds ?? [],
        arguments: argumentsJson.length > MAX_ARGUMENTS_JSON ? { left_out_json_characters: argumentsJson.length } : (refusal.arguments ?? {}),
        outcome: 'refused',
        errorCode: refusal.errorCode,
        reason: refusal.reason,
        ...refusal.people,
      })
      .catch(() => {});
  }
}

import type { LogFields, Logger } from '../../shared/log/logger.ts';
import { type RateLimit, RateLimiter } from './rate-limiter.ts';

/**
 * Warnings about what strangers do (refused enrollments, bad tokens): a flood
 * of attempts must not become a flood of log lines. Past the limit lines are
 * counted, and the next line written says how many were left out.
 */
export class ThrottledWarnings {
  private readonly limiter: RateLimiter;
  private suppressed = 0;

  constructor(
    private readonly log: Logger,
    limit: RateLimit,
  ) {
    this.limiter = new RateLimiter(limit, 1);
  }

  warn(message: string, fields: LogFields, nowMs = Date.now()): void {
    if (!this.limiter.take('', nowMs).allowed) {
      this.suppressed += 1;
      return;
    }
    this.log.warn(message, this.suppressed ? { ...fields, similar_lines_left_out: this.suppressed } : fields);
    this.suppressed = 0;
  }
}

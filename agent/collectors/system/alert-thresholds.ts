import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Thresholds } from './alert-recorder.ts';

const FILE = 'alert-thresholds.json';

/**
 * A host's alert thresholds: the agent's flags (--alert-cpu, --alert-memory,
 * --alert-disk) until set_alert_thresholds changes them, then what it set,
 * kept in the agent's data dir so that a restart keeps them. `current` is one
 * object changed in place: the recorder that holds it sees each change.
 */
export class AlertThresholds {
  readonly current: Thresholds;
  private readonly file: string | undefined;

  constructor(dataDir: string | undefined, flags: Thresholds) {
    this.file = dataDir ? join(dataDir, FILE) : undefined;
    this.current = { ...flags, ...this.stored() };
  }

  /** Sets those given; says whether any differed. */
  set(wanted: Partial<Thresholds>): boolean {
    const changed = (Object.keys(wanted) as (keyof Thresholds)[]).filter((key) => wanted[key] !== undefined && wanted[key] !== this.current[key]);
    if (changed.length === 0) return false;
    for (const key of changed) this.current[key] = wanted[key] as number;
    if (this.file) {
      // Written whole, then renamed over the old one: a crash leaves one or the other, never half.
      writeFileSync(`${this.file}.tmp`, `${JSON.stringify(this.current)}\n`);
      renameSync(`${this.file}.tmp`, this.file);
    }
    return true;
  }

  /** What an earlier set_alert_thresholds kept; what is not a percent is ignored (the flags stand). */
  private stored(): Partial<Thresholds> {
    if (!this.file || !existsSync(this.file)) return {};
    try {
      const saved = JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, unknown>;
      const kept: Partial<Thresholds> = {};
      for (const key of ['cpu', 'memory', 'disk'] as const) {
        const value = saved[key];
        if (typeof value === 'number' && value >= 1 && value <= 100) kept[key] = value;
      }
      return kept;
    } catch {
      return {};
    }
  }
}

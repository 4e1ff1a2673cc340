import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheapFigures } from '../../sampler/system-sampler.ts';

type AlertState = 'ok' | 'warning' | 'critical';
export type Metric = 'cpu' | 'memory' | 'disk';

export interface Thresholds {
  cpu: number;
  memory: number;
  disk: number;
}

interface AlertReading {
  metric: Metric;
  mount?: string;
  state: AlertState;
  value_percent: number | null;
  threshold_percent: number;
}

interface Crossing {
  timestamp_unix_ms: number;
  metric: Metric;
  mount?: string;
  value_percent: number;
  threshold_percent: number;
  state: AlertState;
}

/** Within this many points under the threshold a figure is a warning; at or over it, critical. */
const WARNING_MARGIN = 10;
const KEEP = 1000;
const FILE = 'alerts-history.jsonl';

export function classify(value: number | null, threshold: number): AlertState {
  if (value === null) return 'ok';
  if (value >= threshold) return 'critical';
  return value >= threshold - WARNING_MARGIN ? 'warning' : 'ok';
}

/** Every figure of a sample against its threshold. */
export function readings(figures: CheapFigures, thresholds: Thresholds): AlertReading[] {
  return [
    { metric: 'cpu', value_percent: figures.cpuPercent, threshold_percent: thresholds.cpu, state: classify(figures.cpuPercent, thresholds.cpu) },
    {
      metric: 'memory',
      value_percent: figures.memory.usage_percent,
      threshold_percent: thresholds.memory,
      state: classify(figures.memory.usage_percent, thresholds.memory),
    },
    ...figures.disks.map(
      (disk): AlertReading => ({
        metric: 'disk',
        mount: disk.mount,
        value_percent: disk.usage_percent,
        threshold_percent: thresholds.disk,
        state: classify(disk.usage_percent, thresholds.disk),
      }),
    ),
  ];
}

/**
 * Records each change of alert state the sampler sees (a crossing), in memory
 * and in the agent's data dir, keeping the last 1000 across restarts.
 */
export class AlertRecorder {
  private readonly crossings: Crossing[] = [];
  private readonly states = new Map<string, AlertState>();
  private readonly file: string | undefined;

  constructor(
    dataDir: string | undefined,
    private readonly thresholds: Thresholds,
    /** Told of each crossing as it is recorded (the agent reports it to the broker). */
    private readonly onCrossing: (crossing: Crossing) => void = () => undefined,
  ) {
    this.file = dataDir ? join(dataDir, FILE) : undefined;
    if (this.file && existsSync(this.file)) {
      const lines = readFileSync(this.file, 'utf8').split('\n').filter(Boolean).slice(-KEEP);
      for (const line of lines) {
        try {
          this.crossings.push(JSON.parse(line) as Crossing);
        } catch {
          // a torn last line from a crash: skip it
        }
      }
      writeFileSync(this.file, lines.map((l) => `${l}\n`).join(''));
      for (const crossing of this.crossings) this.states.set(`${crossing.metric}:${crossing.mount ?? ''}`, crossing.state);
    }
  }

  observe(figures: CheapFigures): void {
    for (const reading of readings(figures, this.thresholds)) {
      if (reading.value_percent === null) continue;
      const key = `${reading.metric}:${reading.mount ?? ''}`;
      const previous = this.states.get(key) ?? 'ok';
      if (previous === reading.state) continue;
      this.states.set(key, reading.state);
      const crossing: Crossing = {
        timestamp_unix_ms: figures.sampledAt,
        metric: reading.metric,
        ...(reading.mount ? { mount: reading.mount } : {}),
        value_percent: reading.value_percent,
        threshold_percent: reading.threshold_percent,
        state: reading.state,
      };
      this.crossings.push(crossing);
      if (this.crossings.length > KEEP) this.crossings.splice(0, this.crossings.length - KEEP);
      if (this.file) appendFileSync(this.file, `${JSON.stringify(crossing)}\n`);
      this.onCrossing(crossing);
    }
  }

  /** The latest crossing of each figure now in warning or critical: what a broker that just (re)connected should know. */
  active(): Crossing[] {
    const latest = new Map<string, Crossing>();
    for (const crossing of this.crossings) latest.set(`${crossing.metric}:${crossing.mount ?? ''}`, crossing);
    return [...latest.values()].filter((crossing) => crossing.state !== 'ok');
  }

  history(sinceUnixMs: number, limit: number): Crossing[] {
    return this.crossings
      .filter((c) => c.timestamp_unix_ms >= sinceUnixMs)
      .reverse()
      .slice(0, limit);
  }
}

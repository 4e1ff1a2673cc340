import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Incident, Runner } from '../../../shared/domains/watch/watch-incident.ts';

/** One watched target and what the agent last knew of it. */
export interface Watch {
  container: string;
  runner: Runner;
  unit?: string;
  added_at_unix_ms: number;
  /** The container and run last seen, to tell a restart the event stream missed (the agent was down). */
  last_container_id?: string;
  last_start_unix_ms?: number;
}

const WATCHES_FILE = 'watches.json';
const INCIDENTS_FILE = 'watch-incidents.jsonl';
/** Incidents kept across restarts, oldest dropped first. */
const KEEP_INCIDENTS = 1000;

/**
 * The watched targets and their incidents, in the agent's data dir so both
 * survive an agent restart: the targets as one JSON file rewritten whole
 * (through a rename, so a crash leaves the old or the new), the incidents as
 * JSON lines appended as they happen.
 */
export class WatchStore {
  private readonly watches = new Map<string, Watch>();
  private readonly incidentList: Incident[] = [];
  private readonly dir: string | undefined;

  constructor(dataDir: string | undefined) {
    this.dir = dataDir;
    if (!dataDir) return;
    mkdirSync(dataDir, { recursive: true });
    const watchesFile = join(dataDir, WATCHES_FILE);
    if (existsSync(watchesFile)) {
      for (const watch of JSON.parse(readFileSync(watchesFile, 'utf8')) as Watch[]) this.watches.set(watch.container, watch);
    }
    const incidentsFile = join(dataDir, INCIDENTS_FILE);
    if (existsSync(incidentsFile)) {
      const lines = readFileSync(incidentsFile, 'utf8').split('\n').filter(Boolean).slice(-KEEP_INCIDENTS);
      for (const line of lines) {
        try {
          this.incidentList.push(JSON.parse(line) as Incident);
        } catch {
          // a torn last line from a crash: skip it
        }
      }
      writeFileSync(incidentsFile, lines.map((line) => `${line}\n`).join(''));
    }
  }

  list(): Watch[] {
    return [...this.watches.values()].sort((a, b) => a.container.localeCompare(b.container));
  }

  get(container: string): Watch | undefined {
    return this.watches.get(container);
  }

  /** Adds or replaces a watch. */
  put(watch: Watch): void {
    this.watches.set(watch.container, watch);
    this.save();
  }

  remove(container: string): boolean {
    const removed = this.watches.delete(container);
    if (removed) this.save();
    return removed;
  }

  /** Remembers the run a watch last saw. */
  sawRun(container: string, containerId: string, startUnixMs: number): void {
    const watch = this.watches.get(container);
    if (!watch || (watch.last_container_id === containerId && watch.last_start_unix_ms === startUnixMs)) return;
    watch.last_container_id = containerId;
    watch.last_start_unix_ms = startUnixMs;
    this.save();
  }

  record(incident: Incident): void {
    this.incidentList.push(incident);
    if (this.incidentList.length > KEEP_INCIDENTS) this.incidentList.splice(0, this.incidentList.length - KEEP_INCIDENTS);
    if (this.dir) appendFileSync(join(this.dir, INCIDENTS_FILE), `${JSON.stringify(incident)}\n`);
  }

  has(incidentId: string): boolean {
    return this.incidentList.some((incident) => incident.id === incidentId);
  }

  /** Newest first. */
  incidents(filter: { container?: string | undefined; sinceUnixMs?: number | undefined; limit: number }): Incident[] {
    return this.incidentList
      .filter((incident) => filter.container === undefined || incident.container === filter.container)
      .filter((incident) => filter.sinceUnixMs === undefined || incident.detected_at_unix_ms >= filter.sinceUnixMs)
      .reverse()
      .slice(0, filter.limit);
  }

  private save(): void {
    if (!this.dir) return;
    const file = join(this.dir, WATCHES_FILE);
    writeFileSync(`${file}.tmp`, JSON.stringify(this.list(), null, 2));
    renameSync(`${file}.tmp`, file);
  }
}

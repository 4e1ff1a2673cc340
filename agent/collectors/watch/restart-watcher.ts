import type { ContainerInspectInfo } from 'dockerode';
import type { Incident } from '../../../shared/domains/watch/watch-incident.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import { sleep } from '../../connection/backoff.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { dockerStatus } from '../../engine/engine-errors.ts';
import { unixMs } from '../../engine/engine-time.ts';
import type { EngineEvent } from '../../engine/event-follower.ts';
import { LogDemultiplexer, type LogStream, splitTimestamp } from '../../engine/log-demultiplexer.ts';
import type { Report } from '../collector.ts';
import { crashAnalysis, FLAPPING_RESTARTS, FLAPPING_WINDOW_MS } from './crash-analysis.ts';
import type { WatchStore } from './watch-store.ts';

/** Log lines an incident keeps on each side of the restart. */
const LOG_LINES = 20;
/**
 * How much earlier than the engine's recorded start a run's first line may
 * be: the engine stamps StartedAt after the process is already running, so a
 * busy host sees a line or two written before it.
 */
const START_STAMP_SLACK_MS = 500;
const LOG_LINE_CHARS = 4096;

/** What the events said of a container's current run before it ended. */
interface RunEvents {
  exitCode: number | null;
  oomKilled: boolean;
  healthFailures: number;
}

interface RestartWatcherOptions {
  docker: Pick<EngineClient, 'getContainer'>;
  store: WatchStore;
  log: Logger;
  report?: Report;
  /** How long after a restart to wait for the new run's first log lines. */
  afterLogsMs: number;
  signal: AbortSignal;
}

/**
 * Turns the engine's events about watched containers into incidents: a
 * watched container that starts again (same container, a new start time)
 * has restarted, and the incident says how its previous run ended (exit
 * code, OOM kill, failed health checks from the events), whether it is
 * flapping, and the log lines around the restart. Restarts of one container
 * are handled one at a time, in order.
 */
export class RestartWatcher {
  private readonly runs = new Map<string, RunEvents>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly options: RestartWatcherOptions) {}

  onEvent(event: EngineEvent): void {
    if (event.type !== 'container' || !event.name) return;
    const watch = this.options.store.get(event.name);
    if (watch?.runner !== 'docker') return;
    const run = this.runOf(event.id);
    if (event.action === 'die') run.exitCode = event.exit_code ?? null;
    else if (event.action === 'oom') run.oomKilled = true;
    else if (event.action === 'health_status: unhealthy') run.healthFailures += 1;
    else if (event.action === 'start') void this.inTurn(event.name, () => this.observe(event.name, true)).catch(() => undefined);
  }

  /** Runs work about one container after the work already queued for it. */
  inTurn<T>(container: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(container) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.queues.set(container, settled);
    void settled.then(() => {
      if (this.queues.get(container) === settled) this.queues.delete(container);
    });
    return next;
  }

  /**
   * Looks at a watched container now: records a restart not recorded yet (the
   * incident, when there is one) and remembers the current run. Undefined when
   * there is no such container. After a live restart it first waits for the new
   * run's first log lines.
   */
  async observe(container: string, waitForLogs: boolean): Promise<{ info: ContainerInspectInfo; incident: Incident | undefined } | undefined> {
    const { store } = this.options;
    let info: ContainerInspectInfo;
    try {
      info = await this.options.docker.getContainer(container).inspect();
    } catch (error) {
      if (dockerStatus(error) === 404) return undefined;
      throw error;
    }
    const id = info.Id.slice(0, 12);
    const currentStart = unixMs(info.State.StartedAt);
    const watch = store.get(container);
    if (!watch || currentStart === null) return { info, incident: undefined };
    const previousStart = watch.last_container_id === id ? (watch.last_start_unix_ms ?? null) : null;
    const incidentId = `${id}-${currentStart}`;
    if (previousStart === null || previousStart === currentStart || store.has(incidentId)) {
      store.sawRun(container, id, currentStart);
      return { info, incident: undefined };
    }
    if (waitForLogs) await sleep(this.options.afterLogsMs, this.options.signal);
    const ended = this.runs.get(id) ?? { exitCode: null, oomKilled: false, healthFailures: 0 };
    this.runs.delete(id);
    const now = Date.now();
    const restartsInWindow = store.incidents({ container, sinceUnixMs: now - FLAPPING_WINDOW_MS, limit: 1000 }).length + 1;
    const flapping = restartsInWindow >= FLAPPING_RESTARTS;
    // The previous run ended when the engine says the container last finished: after that, the lines are the new run's.
    const previousEnd = unixMs(info.State.FinishedAt) ?? currentStart;
    const logs = await this.logsAround(info.Id, previousStart, Math.min(previousEnd, currentStart)).catch(() => ({ before: [], after: [] }));
    const incident: Incident = {
      id: incidentId,
      container,
      container_id: id,
      image: info.Config.Image,
      detected_at_unix_ms: now,
      restart_count: info.RestartCount,
      previous_start_unix_ms: previousStart,
      current_start_unix_ms: currentStart,
      exit_code: ended.exitCode,
      oom_killed: ended.oomKilled,
      health_failures: ended.healthFailures,
      flapping,
      restarts_in_window: restartsInWindow,
      analysis: crashAnalysis({ ...ended, restartsInWindow, flapping }),
      logs_before: logs.before,
      logs_after: logs.after,
    };
    store.record(incident);
    store.sawRun(container, id, currentStart);
    this.options.report?.('watch_incident', incident);
    this.options.log.info('watched container restarted', { container, exit_code: ended.exitCode, restart_count: info.RestartCount, flapping });
    return { info, incident };
  }

  private runOf(id: string): RunEvents {
    let run = this.runs.get(id);
    if (!run) {
      run = { exitCode: null, oomKilled: false, healthFailures: 0 };
      this.runs.set(id, run);
    }
    return run;
  }

  /** The last lines of the previous run and the first of the new one, told apart by the engine's timestamps. */
  private async logsAround(containerId: string, previousStart: number, previousEnd: number): Promise<Record<'before' | 'after', Incident['logs_before']>> {
    const handle = this.options.docker.getContainer(containerId);
    const tty = (await handle.inspect()).Config.Tty;
    const raw = (await handle.logs({ follow: false, stdout: true, stderr: true, timestamps: true, tail: 500 })) as unknown as Buffer;
    const demux = new LogDemultiplexer(!tty);
    const before: { stream: LogStream; text: string }[] = [];
    const after: { stream: LogStream; text: string }[] = [];
    for (const line of [...demux.push(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw))), ...demux.flush()]) {
      const { timestamp, text } = splitTimestamp(line.raw);
      const at = timestamp ? Date.parse(timestamp) : Number.NaN;
      if (Number.isNaN(at)) continue;
      const entry = { stream: line.stream, text: text.slice(0, LOG_LINE_CHARS) };
      if (at > previousEnd) after.push(entry);
      else if (at >= previousStart - START_STAMP_SLACK_MS) before.push(entry);
    }
    return { before: before.slice(-LOG_LINES), after: after.slice(0, LOG_LINES) };
  }
}

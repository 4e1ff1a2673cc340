import type { Readable } from 'node:stream';
import type { Logger } from '../../shared/log/logger.ts';
import { sleep } from '../connection/backoff.ts';
import type { EngineClient } from './engine-client.ts';
import { onJsonLines } from './json-lines.ts';

/** One engine event, as the collectors keep it. */
export interface EngineEvent {
  time_unix_ms: number;
  /** container, service, node, secret, config, network… */
  type: string;
  action: string;
  id: string;
  name: string;
  image: string;
  exit_code?: number;
  /** The actor's attributes (labels and engine-specific keys). */
  attributes: Record<string, string>;
}

interface RawEvent {
  Type?: string;
  Action?: string;
  status?: string;
  id?: string;
  from?: string;
  time?: number;
  timeNano?: number;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
}

type EventType = 'container' | 'service' | 'node' | 'config' | 'secret' | 'network' | 'volume';

const KEEP = 1000;
const REPLAY_MS = 15 * 60_000;

/**
 * Follows the engine's events of some types for as long as the collector runs,
 * keeping the last 1000 for docker_events and telling listeners (the container
 * directory, the broker) about each one. Reconnects when the engine restarts.
 */
export class EventFollower {
  private readonly history: EngineEvent[] = [];
  private readonly stopController = new AbortController();
  private readonly watchers = new Set<(event: EngineEvent) => void>();
  private stream: Readable | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly docker: Pick<EngineClient, 'getEvents'>,
    private readonly types: readonly EventType[],
    private readonly onEvent: (event: EngineEvent) => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    this.stream?.destroy();
    await this.running;
  }

  /** Also tells `watcher` of each event from now on (a change reporting what the engine does meanwhile), until the returned function is called. */
  watch(watcher: (event: EngineEvent) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Newest first; `types` matches actions (health_status matches every health_status: event). */
  recent(filter: { sinceUnixMs?: number; types?: string[]; name?: string; limit: number }): EngineEvent[] {
    const types = filter.types?.map((t) => t.toLowerCase());
    return this.history
      .filter((e) => filter.sinceUnixMs === undefined || e.time_unix_ms >= filter.sinceUnixMs)
      .filter((e) => !types || types.some((t) => e.action === t || e.action.startsWith(`${t}:`)))
      .filter((e) => !filter.name || e.name.includes(filter.name))
      .reverse()
      .slice(0, filter.limit);
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopController.signal.aborted) {
      try {
        // The first time, replay what the engine still remembers of the last 15 minutes (it keeps
        // a few hundred events), so a crash loop that began before the agent is not missed.
        const since = Math.floor((this.history.at(-1)?.time_unix_ms ?? Date.now() - REPLAY_MS) / 1000);
        this.stream = (await this.docker.getEvents({ since, filters: { type: [...this.types] } })) as unknown as Readable;
        failures = 0;
        await this.consume(this.stream);
      } catch (error) {
        failures += 1;
        this.log.debug('docker event stream failed', { error: (error as Error).message });
      }
      await sleep(Math.min(30_000, 500 * 2 ** Math.min(failures, 6)), this.stopController.signal);
    }
  }

  private consume(stream: Readable): Promise<void> {
    return new Promise((resolve) => {
      onJsonLines(stream, (value) => {
        const event = this.toEvent(value as RawEvent);
        // After a reconnect the engine replays from `since`: skip what the history already holds.
        if (this.history.some((e) => e.time_unix_ms === event.time_unix_ms && e.id === event.id && e.action === event.action)) return;
        this.history.push(event);
        if (this.history.length > KEEP) this.history.splice(0, this.history.length - KEEP);
        this.onEvent(event);
        for (const watcher of this.watchers) watcher(event);
      });
      stream.on('end', () => resolve());
      stream.on('error', () => resolve());
      stream.on('close', () => resolve());
    });
  }

  private toEvent(raw: RawEvent): EngineEvent {
    const attributes = raw.Actor?.Attributes ?? {};
    const exitCode = attributes.exitCode === undefined ? undefined : Number(attributes.exitCode);
    const type = raw.Type ?? 'container';
    return {
      time_unix_ms: raw.timeNano ? Math.floor(raw.timeNano / 1e6) : (raw.time ?? 0) * 1000,
      type,
      action: (raw.Action ?? raw.status ?? '').trim(),
      id: type === 'container' ? (raw.Actor?.ID ?? raw.id ?? '').slice(0, 12) : (raw.Actor?.ID ?? raw.id ?? ''),
      name: attributes.name ?? '',
      image: attributes.image ?? raw.from ?? '',
      ...(exitCode !== undefined && Number.isFinite(exitCode) ? { exit_code: exitCode } : {}),
      attributes,
    };
  }
}

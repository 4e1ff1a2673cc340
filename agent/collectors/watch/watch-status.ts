import type { ContainerInspectInfo } from 'dockerode';
import type { z } from 'zod';
import type { watchList } from '../../../shared/domains/watch/watch-actions.ts';
import { dockerMessage } from '../../engine/engine-errors.ts';
import { unixMs } from '../../engine/engine-time.ts';
import type { RestartWatcher } from './restart-watcher.ts';
import type { Watch, WatchStore } from './watch-store.ts';

export type WatchRow = z.infer<typeof watchList.output>['watches'][number];

/** What the watch handlers share: the store and the watcher that reads the engine. */
export interface WatchContext {
  store: WatchStore;
  watcher: RestartWatcher;
}

/** A restart within this long makes a target `restarted` rather than `healthy`. */
const RECENT_RESTART_MS = 10 * 60_000;

/**
 * One watch as watch_list and watch_check answer it. A runner the agent cannot
 * read (systemd, pm2) and an engine that does not answer give `skipped` with
 * the reason: never `healthy`, which would claim something nobody checked.
 */
export async function watchRow(watch: Watch, context: WatchContext, now = Date.now()): Promise<WatchRow> {
  const incidents = context.store.incidents({ container: watch.container, limit: 1000 });
  const base = {
    container: watch.container,
    runner: watch.runner,
    ...(watch.unit ? { unit: watch.unit } : {}),
    added_at_unix_ms: watch.added_at_unix_ms,
    incidents: incidents.length,
    last_incident_unix_ms: incidents[0]?.detected_at_unix_ms ?? null,
    restart_count: null,
    started_at_unix_ms: null,
  };
  if (watch.runner !== 'docker') {
    return {
      ...base,
      status: 'skipped',
      reason: `this agent cannot read ${watch.runner} ${watch.runner === 'systemd' ? 'units' : 'processes'}, so the state is unknown`,
    };
  }
  let info: ContainerInspectInfo | undefined;
  try {
    info = (await context.watcher.inTurn(watch.container, () => context.watcher.observe(watch.container, false)))?.info;
  } catch (error) {
    return { ...base, status: 'skipped', reason: `the Docker engine did not answer: ${dockerMessage(error)}` };
  }
  if (!info) return { ...base, status: 'missing', reason: 'no container has this name on this host' };
  const state = info.State;
  const row = { ...base, restart_count: info.RestartCount, started_at_unix_ms: unixMs(state.StartedAt) };
  if (!state.Running) return { ...row, status: 'down', reason: `${state.Status}, exit code ${state.ExitCode}${state.OOMKilled ? ', OOM-killed' : ''}` };
  if (state.Health?.Status === 'unhealthy') return { ...row, status: 'down', reason: 'running but its health check fails' };
  const recent = base.last_incident_unix_ms !== null && now - base.last_incident_unix_ms < RECENT_RESTART_MS;
  return { ...row, status: recent ? 'restarted' : 'healthy' };
}

import { setTimeout as delay } from 'node:timers/promises';
import type { ContainerInspectInfo } from 'dockerode';

/** Whether a started container came up, its health, and in words why not. */
export interface Verdict {
  up: boolean;
  health: string | null;
  reason: string;
}

/** How often a wait reads the container's state. */
const POLL_MS = 250;
/** A container without a health check counts as up when it still runs this long after it started. */
const STAYS_UP_MS = 2000;
/** What of a health check's last output a reason quotes. */
const OUTPUT_CHARS = 200;

function lastOutput(info: ContainerInspectInfo): string {
  const log = info.State.Health?.Log ?? [];
  const output = (log.at(-1)?.Output ?? '').trim().replace(/\s+/g, ' ');
  return output.length > OUTPUT_CHARS ? `${output.slice(0, OUTPUT_CHARS - 1)}…` : output;
}

/**
 * Waits until a started container is up: healthy by its health check, or,
 * without one, still running after a couple of seconds. It is down once it
 * exits or restarts (a restart policy would hide a crash), once its health
 * check says unhealthy, or when `signal` ends the wait first.
 */
export async function waitUntilUp(container: { inspect(): Promise<ContainerInspectInfo> }, signal: AbortSignal, waitS: number): Promise<Verdict> {
  const startedMs = Date.now();
  for (;;) {
    const info = await container.inspect();
    const health = info.State.Health?.Status ?? null;
    if (!info.State.Running || info.State.Restarting || info.RestartCount > 0) {
      return {
        up: false,
        health,
        reason: `it exited with code ${info.State.ExitCode}${info.RestartCount > 0 ? ` and restarted ${info.RestartCount} times` : ''}`,
      };
    }
    if (health === 'healthy' || (health === null && Date.now() - startedMs >= STAYS_UP_MS)) return { up: true, health, reason: '' };
    if (health === 'unhealthy') {
      const output = lastOutput(info);
      return {
        up: false,
        health,
        reason: `its health check failed ${info.State.Health?.FailingStreak ?? 1} times in a row${output ? ` (last output: ${output})` : ''}`,
      };
    }
    if (signal.aborted) {
      const timedOut = (signal.reason as Error | undefined)?.name === 'TimeoutError';
      const state = health === null ? 'up' : 'healthy';
      return {
        up: false,
        health,
        reason: timedOut ? `it was not ${state} within ${waitS} s (health: ${health ?? 'none'})` : `the call was stopped before it was ${state}`,
      };
    }
    await delay(POLL_MS, undefined, { signal }).catch(() => undefined);
  }
}

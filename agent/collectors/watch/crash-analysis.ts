/** What the agent saw of a run that ended, for an incident's short reading. */
interface EndedRun {
  exitCode: number | null;
  oomKilled: boolean;
  healthFailures: number;
  restartsInWindow: number;
  flapping: boolean;
}

/** Restarts within this window, this one included, that make a container flapping. */
export const FLAPPING_RESTARTS = 3;
export const FLAPPING_WINDOW_MS = 10 * 60_000;

/** Signals a process commonly dies of, by the exit code the engine reports (128 + signal). */
const SIGNALS: Record<number, string> = { 130: 'SIGINT', 134: 'SIGABRT', 137: 'SIGKILL', 139: 'SIGSEGV', 143: 'SIGTERM' };

/** A one-line reading of a restart: how the run ended and whether the container keeps restarting. */
export function crashAnalysis(run: EndedRun): string {
  const parts: string[] = [];
  if (run.oomKilled) parts.push('killed for running out of memory (OOM)');
  if (run.exitCode === null) parts.push('the end of the previous run was not seen (the agent was away)');
  else if (!run.oomKilled) {
    const signal = SIGNALS[run.exitCode];
    parts.push(run.exitCode === 0 ? 'exited cleanly (code 0)' : `exited with code ${run.exitCode}${signal ? ` (${signal})` : ''}`);
  }
  if (run.healthFailures > 0) parts.push(`${run.healthFailures} failed health check${run.healthFailures === 1 ? '' : 's'} before`);
  parts.push(`${run.restartsInWindow} restart${run.restartsInWindow === 1 ? '' : 's'} in 10 minutes${run.flapping ? ' (flapping)' : ''}`);
  return parts.join('; ');
}

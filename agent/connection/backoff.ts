/**
 * The agent's reconnect backoff: the real agent's, and the benchmarks'
 * simulated agents' too, so that they measure what users run. The cap bounds
 * how long a fleet stays away once its broker is back (about half of it on
 * average); the herd is kept off by the jitter and by the broker, which holds
 * connections past its admission rate until their turn, and a refused dial to
 * a broker that is down costs it nothing.
 */
export const RECONNECT_BACKOFF = { baseMs: 500, capMs: 15_000 } as const;

/**
 * Exponential backoff with full jitter: the n-th consecutive failure waits a
 * uniformly random time in [0, min(cap, base·2^(n-1))]. Randomising the whole
 * wait (not just a part) is what spreads a fleet that lost its broker at the
 * same instant, so it does not come back in the same second.
 */
export function fullJitterDelayMs(failures: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  const ceiling = Math.min(capMs, baseMs * 2 ** exponent);
  return Math.floor(random() * ceiling);
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** setTimeout for delays past the 24.8-day limit of Node's timers: re-arms until the time has come. */
export function setLongTimeout(callback: () => void, delayMs: number): { clear(): void } {
  const MAX = 2 ** 31 - 1;
  const due = Date.now() + delayMs;
  let timer: NodeJS.Timeout;
  const arm = () => {
    const left = due - Date.now();
    timer = setTimeout(left > MAX ? arm : callback, Math.max(0, Math.min(left, MAX)));
    timer.unref();
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}

import type { EventEmitter } from 'node:events';

/**
 * Polls a condition until it holds, for state that has no event to await
 * (another process's output, a file, a store row). Fails with the last value
 * seen, so a timeout says what was there instead.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const intervalMs = options.intervalMs ?? 50;
  const until = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < until) {
    try {
      last = await probe();
      if (last) return last as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'} (last: ${JSON.stringify(last) ?? String(lastError)})`);
}

/** The next emission of an event, as a promise. */
export function nextEvent<T extends unknown[]>(emitter: EventEmitter, event: string, timeoutMs = 20_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, onEvent);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for "${event}"`));
    }, timeoutMs);
    function onEvent(...args: unknown[]) {
      clearTimeout(timer);
      resolve(args as T);
    }
    emitter.once(event, onEvent);
  });
}

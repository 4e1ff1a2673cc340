import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * How late this process's event loop has run since the last read: a bench
 * process that lags seconds is what the others wait on. Each read starts the
 * next window.
 */
export function loopDelay(): () => { p99_ms: number; max_ms: number } {
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  histogram.enable();
  return () => {
    const read = { p99_ms: histogram.percentile(99) / 1e6, max_ms: histogram.max / 1e6 };
    histogram.reset();
    return read;
  };
}

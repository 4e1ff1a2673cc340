import type { MetricsAnswer } from './metrics-chart.ts';

/**
 * What the caption says of a history with no sample, or one younger than the
 * range (a broker that just started): the chart alone would look like a gap.
 */
export function historyNote(answer: MetricsAnswer, now = Date.now()): string | undefined {
  const times = answer.series.flatMap((s) => s.points.filter((p) => p.v !== null).map((p) => p.t));
  if (times.length === 0) return 'No samples in this range yet: the broker keeps one a minute from heartbeats.';
  const rangeStart = Math.min(...answer.series.flatMap((s) => s.points.map((p) => p.t)));
  const first = Math.min(...times);
  const stepMs = (answer.step_s ?? 60) * 1000;
  if (first <= rangeStart + stepMs) return undefined;
  const minutes = Math.max(1, Math.round((now - first) / 60_000));
  return `History is young: ${minutes} min so far, since ${new Date(first).toLocaleTimeString()}.`;
}

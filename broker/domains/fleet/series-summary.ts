/** A series as one line of figures: where it is now, its bounds and mean, and which way it goes. */
export interface SeriesSummary {
  latest: number | null;
  min: number | null;
  average: number | null;
  max: number | null;
  trend: 'rising' | 'falling' | 'steady' | 'unknown';
}

/** A move of the last third's mean against the first third's, over this share of the larger, is a trend. */
const TREND_SHARE = 0.1;
/** Fewer samples than this say nothing of a direction. */
const TREND_MIN_POINTS = 3;

const round2 = (value: number) => Math.round(value * 100) / 100;
const mean = (values: readonly number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

/**
 * The figures a model needs of a series without reading its points: the
 * latest, min, average and max of the buckets that have a value, and a trend
 * in one word (the mean of the last third of them against the first third).
 */
export function summarizeSeries(points: readonly { v: number | null }[]): SeriesSummary {
  const values = points.flatMap((point) => (point.v === null ? [] : [point.v]));
  if (values.length === 0) return { latest: null, min: null, average: null, max: null, trend: 'unknown' };
  let trend: SeriesSummary['trend'] = 'unknown';
  if (values.length >= TREND_MIN_POINTS) {
    const third = Math.max(1, Math.floor(values.length / 3));
    const before = mean(values.slice(0, third));
    const after = mean(values.slice(-third));
    const scale = Math.max(Math.abs(before), Math.abs(after));
    trend = scale === 0 || Math.abs(after - before) <= TREND_SHARE * scale ? 'steady' : after > before ? 'rising' : 'falling';
  }
  return {
    latest: values.at(-1) ?? null,
    min: round2(Math.min(...values)),
    average: round2(mean(values)),
    max: round2(Math.max(...values)),
    trend,
  };
}

import type { Metric, MetricsAnswer } from './metrics-chart.ts';

/** The y axis's name with its unit, so a figure is never read without one. */
export function axisLabel(metric: Metric, answer: Pick<MetricsAnswer, 'unit' | 'percent_of'>): string {
  const unit = answer.unit === 'bytes' ? 'bytes' : answer.unit.startsWith('bytes') ? 'bytes/s' : `%${answer.percent_of ? ` of ${answer.percent_of}` : ''}`;
  const name = metric === 'cpu' ? 'CPU' : metric === 'memory' ? 'memory used' : metric === 'disk' ? 'fullest disk' : 'network';
  return `${name} (${unit})`;
}

import { type MetricsAnswer, MetricsChart } from '../components/metrics-chart.ts';
import { h, replace } from '../dom.ts';
import type { Widget } from './widget.ts';

/** get_metrics as a chart; another metric or range is read through the host with the same target. */
export function metricsChartWidget(): Widget {
  const element = h('div', { class: 'widget metrics-chart-widget' });
  return {
    element,
    show(answer, { call, input }) {
      if (answer.error) return replace(element, h('p', { class: 'widget-error' }, answer.error.message));
      const chart = new MetricsChart(
        async (metric, range) => {
          const next = await call('get_metrics', { ...input, metric, range });
          if (next.error) throw new Error(next.error.message);
          return next.structured as unknown as MetricsAnswer;
        },
        { metric: (input.metric as 'cpu' | undefined) ?? 'cpu', range: (input.range as '1h' | undefined) ?? '1h' },
      );
      replace(element, chart.element);
      chart.draw(answer.structured as unknown as MetricsAnswer);
    },
  };
}

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h, replace } from '../dom.ts';
import { formatBytes, formatPercent } from '../format.ts';
import { axisLabel } from './axis-label.ts';
import { historyNote } from './history-note.ts';

export type Metric = 'cpu' | 'memory' | 'disk' | 'network';
export type Range = '1h' | '6h' | '24h' | '7d';

/** get_metrics' answer, as far as the chart reads it. */
export interface MetricsAnswer {
  unit: string;
  /** For cpu: of the whole machine (a host, the fleet) or of one core (a container, a service). */
  percent_of?: string;
  step_s?: number;
  series: { name: string; latest: number | null; points: { t: number; v: number | null }[] }[];
}

const METRICS: Metric[] = ['cpu', 'memory', 'network'];
const RANGES: Range[] = ['1h', '6h', '24h', '7d'];
const COLOURS = ['#2f7ed8', '#e4572e', '#29a36a', '#a05195', '#f3a712', '#3d5a80'];

function formatIn(unit: string, value: number | null): string {
  if (value === null) return '–';
  if (unit === 'bytes') return formatBytes(value);
  if (unit.startsWith('bytes per second')) return `${formatBytes(value)}/s`;
  return formatPercent(value);
}

/**
 * CPU, memory, disk or network over 1h to 7d, from get_metrics, drawn by uPlot (one
 * canvas, a few thousand points in a millisecond or two). The element says how
 * many points it holds (`data-points`), which is what a reader checks first.
 */
export class MetricsChart {
  readonly element: HTMLElement;
  private metric: Metric;
  private range: Range;
  private plot: uPlot | undefined;
  private readonly canvas = h('div', { class: 'chart-canvas' });
  private readonly controls = h('div', { class: 'chart-controls' });
  private readonly caption = h('p', { class: 'chart-caption' });
  private readonly withControls: boolean;
  private loading = false;

  /**
   * `load` reads another metric or range when one is chosen or `show` is
   * called. Without it and with `controls: false`, the page around the chart
   * reads the answers and calls `draw` (the fleet's charts share one range
   * and selector).
   */
  constructor(
    private readonly load: ((metric: Metric, range: Range) => Promise<MetricsAnswer>) | undefined,
    initial: { metric?: Metric; range?: Range; controls?: boolean; title?: string } = {},
  ) {
    this.metric = initial.metric ?? 'cpu';
    this.range = initial.range ?? '1h';
    this.withControls = initial.controls ?? true;
    this.element = h(
      'section',
      { class: 'metrics-chart', 'data-points': 0, ...(initial.title ? { 'aria-label': initial.title } : {}) },
      initial.title ? h('h2', {}, initial.title) : null,
      this.withControls ? this.controls : null,
      this.canvas,
      this.caption,
    );
    this.renderControls();
  }

  private renderControls(): void {
    if (!this.withControls) return;
    const button = <T extends string>(value: T, current: T, pick: (value: T) => void) =>
      h(
        'button',
        { type: 'button', class: value === current ? 'chip selected' : 'chip', 'aria-pressed': String(value === current), onclick: () => pick(value) },
        value,
      );
    replace(
      this.controls,
      h('span', { class: 'chip-group' }, ...METRICS.map((m) => button(m, this.metric, (v) => void this.show(v, this.range)))),
      h('span', { class: 'chip-group' }, ...RANGES.map((r) => button(r, this.range, (v) => void this.show(this.metric, v)))),
    );
  }

  /** Loads and draws a metric over a range; a refresh while one is loading is skipped. */
  async show(metric = this.metric, range = this.range): Promise<void> {
    if (!this.load || (this.loading && metric === this.metric && range === this.range)) return;
    this.metric = metric;
    this.range = range;
    this.renderControls();
    this.loading = true;
    try {
      this.draw(await this.load(metric, range));
    } catch (error) {
      this.caption.textContent = (error as Error).message;
    } finally {
      this.loading = false;
    }
  }

  /** Draws an answer already at hand (a widget gets it with the tool result). */
  draw(answer: MetricsAnswer): void {
    const times = [...new Set(answer.series.flatMap((s) => s.points.map((p) => p.t)))].sort((a, b) => a - b);
    const data: uPlot.AlignedData = [
      times.map((t) => t / 1000),
      ...answer.series.map((s) => {
        const byTime = new Map(s.points.map((p) => [p.t, p.v]));
        return times.map((t) => byTime.get(t) ?? null);
      }),
    ];
    const points = answer.series.reduce((n, s) => n + s.points.filter((p) => p.v !== null).length, 0);
    this.element.dataset.points = String(points);
    const note = historyNote(answer);
    const latest = answer.series.map((s) => `${s.name}: ${formatIn(answer.unit, s.latest)} now`).join(' · ');
    this.caption.textContent = [points ? latest : '', note].filter(Boolean).join(' — ');
    this.element.dataset.history = points === 0 ? 'empty' : note ? 'young' : 'full';
    // The canvas has no text of its own: its axes are named for whoever cannot see it.
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', `${axisLabel(this.metric, answer)} against time (local). ${this.caption.textContent}`);
    const width = Math.max(this.canvas.clientWidth || this.element.clientWidth || 600, 300);
    const options: uPlot.Options = {
      width,
      height: 220,
      series: [
        {},
        ...answer.series.map((s, i) => ({
          label: s.name,
          stroke: COLOURS[i % COLOURS.length],
          width: 2,
          spanGaps: false,
          points: { show: points < 120 },
          value: (_: uPlot, v: number | null) => formatIn(answer.unit, v),
        })),
      ],
      axes: [
        { label: 'time (local)', labelSize: 20 },
        { label: axisLabel(this.metric, answer), labelSize: 20, values: (_: uPlot, ticks: number[]) => ticks.map((v) => formatIn(answer.unit, v)), size: 70 },
      ],
      scales: answer.unit.startsWith('percent') ? { y: { range: (_u, _min, max) => [0, Math.max(100, max)] } } : {},
      legend: { show: answer.series.length > 1 },
    };
    this.plot?.destroy();
    this.plot = new uPlot(options, data, this.canvas);
  }

  destroy(): void {
    this.plot?.destroy();
  }
}

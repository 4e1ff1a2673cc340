import type { CallTool } from '../call-tool.ts';
import { usageSparkline } from '../components/usage-sparkline.ts';
import { h, replace } from '../dom.ts';
import { formatPercent } from '../format.ts';

/** How long a history is shown before it is read again (the broker keeps a point a minute). */
const HISTORY_FRESH_MS = 60_000;

/** Cells put under watch a frame. */
const WATCH_BATCH = 200;

interface History {
  readAt: number;
  reading: boolean;
  points?: (number | null)[];
  note?: string;
}

/**
 * Sparklines of the last hour's CPU from get_metrics (the broker's minute
 * history of what agents report), one per table row: a history is read only
 * once its cell is on screen, and again at most once a minute, so a table of
 * thousands of rows costs a call per row looked at, not per row.
 */
export class LazySparklines {
  private readonly history = new Map<string, History>();
  private readonly observer: IntersectionObserver;
  /** Cells to observe, in the table's order: watched a batch a frame after the rows are drawn, so 2,000 rows show first. */
  private pending: HTMLElement[] = [];
  private flushing = false;

  /** `target` is get_metrics' target for the keys given to `cell` (a host name, or HOST/NAME of a container). */
  constructor(
    private readonly call: CallTool,
    private readonly target: 'host' | 'container',
    private readonly root: () => HTMLElement,
  ) {
    this.observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        this.observer.unobserve(entry.target);
        void this.read((entry.target as HTMLElement).dataset.sparkline ?? '');
      }
    });
  }

  /** The cell of one row: its sparkline when its history was read, read when the cell comes on screen. */
  cell(key: string): HTMLElement {
    const cell = h('span', { class: 'sparkline-cell', 'data-sparkline': key });
    const history = this.history.get(key);
    if (history) this.draw(cell, history);
    if (!history || (!history.reading && Date.now() - history.readAt > HISTORY_FRESH_MS)) this.watch(cell);
    return cell;
  }

  destroy(): void {
    this.pending = [];
    this.observer.disconnect();
  }

  private watch(cell: HTMLElement): void {
    this.pending.push(cell);
    if (this.flushing) return;
    this.flushing = true;
    const flush = () => {
      // Cells of rows redrawn since are no longer in the page: nothing to watch there.
      for (const pending of this.pending.splice(0, WATCH_BATCH)) if (pending.isConnected) this.observer.observe(pending);
      if (this.pending.length) requestAnimationFrame(flush);
      else this.flushing = false;
    };
    requestAnimationFrame(flush);
  }

  private draw(cell: HTMLElement, history: History): void {
    if (history.points?.length) {
      const latest = history.points.findLast((v) => v !== null);
      replace(cell, usageSparkline(history.points, `CPU over the last hour, latest ${formatPercent(latest)}`));
    } else replace(cell, h('span', { class: 'muted', title: history.note ?? '' }, history.note ? '–' : ''));
  }

  private async read(key: string): Promise<void> {
    const history = this.history.get(key) ?? { readAt: 0, reading: false };
    if (history.reading) return;
    history.reading = true;
    this.history.set(key, history);
    const answer = await this.call('get_metrics', { target: this.target, id: key, metric: 'cpu', range: '1h' });
    history.reading = false;
    history.readAt = Date.now();
    const series = (answer.structured?.series as { points: { v: number | null }[] }[] | undefined)?.[0];
    const points = series?.points.map((p) => p.v) ?? [];
    // The history starts when the broker first heard of the host or container: the hour before is no gap.
    const first = points.findIndex((v) => v !== null);
    history.points = first < 0 ? [] : points.slice(first);
    history.note = answer.error?.message ?? (first < 0 ? 'no history yet' : undefined);
    for (const cell of this.root().querySelectorAll<HTMLElement>('[data-sparkline]')) if (cell.dataset.sparkline === key) this.draw(cell, history);
  }
}

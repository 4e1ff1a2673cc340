import { h, replace } from '../dom.ts';

export interface LogLine {
  stream: 'stdout' | 'stderr';
  timestamp?: string;
  text: string;
  /** Where it came from, when the viewer shows several (a service's tasks). */
  source?: string;
}

/** Lines kept on screen; older ones scroll away. */
const MAX_LINES = 5000;

/**
 * Log lines with stdout and stderr told apart, a search box that filters as
 * you type, and new lines appended at the bottom (scrolled into view while the
 * reader is at the bottom). Lines are text nodes: a log line is data.
 */
export class LogViewer {
  readonly element: HTMLElement;
  // Focusable, so the keyboard scrolls it as a mouse wheel does.
  private readonly list = h('ol', { class: 'log-lines', tabindex: 0, 'aria-label': 'log lines' });
  private readonly search = h('input', { type: 'search', placeholder: 'search the lines', class: 'log-search', 'aria-label': 'search the log' });
  private readonly status = h('span', { class: 'log-status' });
  private readonly seen = new Set<string>();
  private lines: LogLine[] = [];

  constructor(title: string) {
    this.search.addEventListener('input', () => this.render());
    this.element = h('section', { class: 'log-viewer' }, h('header', {}, h('h3', {}, title), this.search, this.status), this.list);
  }

  /** Adds lines not seen yet (a follow that overlaps the last read is harmless). */
  append(lines: LogLine[]): void {
    const fresh = lines.filter((line) => {
      const key = `${line.source ?? ''}|${line.timestamp ?? ''}|${line.stream}|${line.text}`;
      if (line.timestamp !== undefined && this.seen.has(key)) return false;
      this.seen.add(key);
      return true;
    });
    if (fresh.length === 0) return;
    this.lines = [...this.lines, ...fresh].slice(-MAX_LINES);
    const atBottom = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 20;
    this.render();
    if (atBottom) this.list.scrollTop = this.list.scrollHeight;
  }

  /** Scrolls to the newest line: where a reader of logs starts. */
  scrollToNewest(): void {
    this.list.scrollTop = this.list.scrollHeight;
  }

  setStatus(text: string): void {
    this.status.textContent = text;
  }

  /** The timestamp of the newest line, for the next read's `since`. */
  get lastTimestamp(): string | undefined {
    return this.lines.findLast((line) => line.timestamp !== undefined)?.timestamp;
  }

  private render(): void {
    const wanted = this.search.value.trim().toLowerCase();
    const shown = wanted ? this.lines.filter((line) => line.text.toLowerCase().includes(wanted)) : this.lines;
    replace(
      this.list,
      shown.map((line) =>
        h(
          'li',
          { class: `log-line ${line.stream}`, 'data-stream': line.stream },
          line.timestamp ? h('time', { datetime: line.timestamp, title: line.timestamp }, line.timestamp.slice(11, 23)) : null,
          line.source ? h('span', { class: 'log-source' }, line.source) : null,
          h('span', { class: 'log-text' }, line.text),
        ),
      ),
    );
  }
}

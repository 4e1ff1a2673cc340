import { h, replace } from '../dom.ts';
import { formatValue } from '../format.ts';

export interface Column<Row> {
  key: string;
  label: string;
  /** The value to sort by (default: the field named by key). */
  value?: (row: Row) => unknown;
  /** The text shown (default: the value as text). */
  text?: (row: Row) => string;
  /** A status word (online, stale, critical …) that colours the cell. */
  status?: (row: Row) => string | undefined;
  numeric?: boolean;
  /** What the cell holds instead of its text (a link, a sparkline); sorting and searching still use value and text. */
  cell?: (row: Row) => Node;
}

export interface FleetTableOptions<Row> {
  columns: Column<Row>[];
  /** A short id for the tests and for links (the host name). */
  rowKey: (row: Row) => string;
  onOpen?: (row: Row) => void;
  sortBy?: string;
  /** Whether the first sort is descending (newest first, say), so the arrow shows the order the rows are in. */
  sortDescending?: boolean;
  empty?: string;
}

const field = (row: unknown, key: string): unknown =>
  key.split('.').reduce<unknown>((value, part) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined), row);

/**
 * A sortable table of hosts, containers or anything listed by a tool: status
 * words coloured, figures with their units, a click on a row opens it. Rows are
 * rebuilt in one pass, so 2,000 hosts render at once.
 */
export class FleetTable<Row> {
  readonly element: HTMLTableElement;
  private rows: Row[] = [];
  private filterText = '';
  private sortKey: string;
  private descending = false;
  private readonly body = h('tbody');
  private readonly head = h('tr');

  constructor(private readonly options: FleetTableOptions<Row>) {
    this.sortKey = options.sortBy ?? options.columns[0]?.key ?? '';
    this.descending = options.sortDescending ?? false;
    this.element = h('table', { class: 'fleet-table' }, h('thead', {}, this.head), this.body);
    this.renderHead();
  }

  update(rows: Row[]): void {
    this.rows = rows;
    this.renderBody();
  }

  /** Shows only the rows where some cell's text contains `text` (any case); empty shows every row. */
  filter(text: string): void {
    this.filterText = text.trim().toLowerCase();
    this.renderBody();
  }

  private cellText(row: Row, column: Column<Row>): string {
    return column.text ? column.text(row) : formatValue(this.valueOf(row, column));
  }

  private valueOf(row: Row, column: Column<Row>): unknown {
    return column.value ? column.value(row) : field(row, column.key);
  }

  private renderHead(): void {
    replace(
      this.head,
      this.options.columns.map((column) =>
        h(
          'th',
          {
            class: column.numeric ? 'numeric' : undefined,
            'aria-sort': column.key === this.sortKey ? (this.descending ? 'descending' : 'ascending') : undefined,
            onclick: () => {
              this.descending = column.key === this.sortKey ? !this.descending : false;
              this.sortKey = column.key;
              this.renderHead();
              this.renderBody();
            },
          },
          column.label,
          column.key === this.sortKey ? (this.descending ? ' ▾' : ' ▴') : '',
        ),
      ),
    );
  }

  private renderBody(): void {
    const column = this.options.columns.find((c) => c.key === this.sortKey);
    const wanted = this.filterText;
    const rows = wanted ? this.rows.filter((row) => this.options.columns.some((c) => this.cellText(row, c).toLowerCase().includes(wanted))) : this.rows;
    const sorted = column ? [...rows].sort((a, b) => compare(this.valueOf(a, column), this.valueOf(b, column)) * (this.descending ? -1 : 1)) : rows;
    if (sorted.length === 0) {
      const empty = wanted && this.rows.length > 0 ? `No row matches “${wanted}”.` : (this.options.empty ?? 'Nothing to show.');
      replace(this.body, h('tr', {}, h('td', { colspan: this.options.columns.length, class: 'empty' }, empty)));
      return;
    }
    const fragment = document.createDocumentFragment();
    for (const row of sorted) {
      // An openable row takes the keyboard's focus and opens with Enter, as with a click.
      const tr = h('tr', {
        'data-key': this.options.rowKey(row),
        class: this.options.onOpen ? 'openable' : undefined,
        tabindex: this.options.onOpen ? 0 : undefined,
      });
      if (this.options.onOpen) {
        tr.addEventListener('click', () => this.options.onOpen?.(row));
        tr.addEventListener('keydown', (event) => {
          if (event.key === 'Enter') this.options.onOpen?.(row);
        });
      }
      for (const c of this.options.columns) {
        const status = c.status?.(row);
        const td = document.createElement('td');
        // A figure stays aligned with its column when its status colours it.
        const classes = [c.numeric ? 'numeric' : '', status ? `status status-${status}` : ''].filter(Boolean).join(' ');
        if (classes) td.className = classes;
        if (status) td.dataset.status = status;
        if (c.cell) td.append(c.cell(row));
        else td.textContent = this.cellText(row, c);
        tr.append(td);
      }
      fragment.append(tr);
    }
    this.body.replaceChildren(fragment);
  }
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

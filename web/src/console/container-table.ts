import type { CallTool } from '../call-tool.ts';
import { type Column, FleetTable } from '../components/fleet-table.ts';
import { h } from '../dom.ts';
import { formatBytes, formatDuration, formatPercent, formatPorts } from '../format.ts';
import { LazySparklines } from './lazy-sparklines.ts';
import { type DomainPage, domainPageHref } from './page.ts';

/** A container as docker_list lists it, with its host and, when it runs, its docker_stats figures. */
export interface ContainerRow {
  host: string;
  name: string;
  image: string;
  state: string;
  status?: string;
  health?: string | null;
  restart_count?: number;
  started_at_unix_ms?: number | null;
  ports?: { private_port: number; public_port: number | null; protocol: string }[];
  stats?: {
    cpu_percent: number | null;
    memory_usage_bytes: number;
    memory_limit_bytes: number;
    memory_percent: number;
    net_rx_bytes: number;
    net_tx_bytes: number;
  };
}

export interface ContainerTableOptions {
  call: CallTool;
  /** The domain page of one container, if there is one: each name links to it. */
  containerPage?: DomainPage | undefined;
  /** Whether rows are of several hosts (a host column, rows keyed HOST/NAME) or of one (keyed by name). */
  fleet: boolean;
  onOpen?: (row: ContainerRow) => void;
  empty: string;
}

/** docker_list's rows of one node of an answer, each with its host and its stats from docker_stats' node of the same host. */
export function containerRows(host: string, list: Record<string, unknown>, stats: Record<string, unknown> | undefined): ContainerRow[] {
  const byName = new Map(((stats?.containers ?? []) as (ContainerRow['stats'] & { name: string })[]).map((row) => [row.name, row]));
  return ((list.containers ?? []) as Omit<ContainerRow, 'host'>[]).map((c) => ({ ...c, host, stats: byName.get(c.name) }));
}

/**
 * Containers with their figures: state, health, CPU with a sparkline of its
 * last hour (read as its row comes on screen), memory of its limit, network,
 * restarts, uptime and ports.
 */
export class ContainerTable {
  readonly element: HTMLElement;
  private readonly table: FleetTable<ContainerRow>;
  private readonly sparklines: LazySparklines;

  constructor(private readonly options: ContainerTableOptions) {
    this.sparklines = new LazySparklines(options.call, 'container', () => this.element);
    const columns: Column<ContainerRow>[] = [
      ...(options.fleet ? [{ key: 'host', label: 'host' }] : []),
      { key: 'name', label: 'container', cell: (c) => this.nameCell(c) },
      { key: 'image', label: 'image' },
      { key: 'state', label: 'state', status: (c) => (c.state === 'running' ? 'online' : c.state === 'exited' || c.state === 'dead' ? 'offline' : 'stale') },
      { key: 'status', label: 'status' },
      { key: 'health', label: 'health', status: (c) => (c.health === 'unhealthy' ? 'critical' : undefined) },
      {
        key: 'cpu',
        label: 'CPU',
        numeric: true,
        value: (c) => c.stats?.cpu_percent,
        text: (c) => (c.stats ? formatPercent(c.stats.cpu_percent) : '–'),
      },
      { key: 'history', label: 'CPU, last hour', value: (c) => c.stats?.cpu_percent, text: () => '', cell: (c) => this.sparklines.cell(`${c.host}/${c.name}`) },
      {
        key: 'memory',
        label: 'memory (of limit)',
        numeric: true,
        value: (c) => c.stats?.memory_usage_bytes,
        text: (c) =>
          c.stats ? `${formatBytes(c.stats.memory_usage_bytes)} (${formatPercent(c.stats.memory_percent)} of ${formatBytes(c.stats.memory_limit_bytes)})` : '–',
      },
      {
        key: 'network',
        label: 'network rx / tx',
        numeric: true,
        value: (c) => (c.stats ? c.stats.net_rx_bytes + c.stats.net_tx_bytes : undefined),
        text: (c) => (c.stats ? `${formatBytes(c.stats.net_rx_bytes)} / ${formatBytes(c.stats.net_tx_bytes)}` : '–'),
      },
      { key: 'restart_count', label: 'restarts', numeric: true },
      {
        key: 'uptime',
        label: 'up',
        numeric: true,
        value: (c) => (c.state === 'running' && c.started_at_unix_ms ? -c.started_at_unix_ms : undefined),
        text: (c) => (c.state === 'running' && c.started_at_unix_ms ? formatDuration((Date.now() - c.started_at_unix_ms) / 1000) : '–'),
      },
      { key: 'ports', label: 'ports', text: (c) => formatPorts(c.ports) },
    ];
    this.table = new FleetTable<ContainerRow>({
      columns,
      rowKey: (c) => (options.fleet ? `${c.host}/${c.name}` : c.name),
      ...(options.onOpen ? { onOpen: options.onOpen } : {}),
      empty: options.empty,
    });
    this.element = this.table.element;
  }

  update(rows: ContainerRow[]): void {
    this.table.update(rows);
  }

  /** Shows only the rows with a cell containing `text`. */
  filter(text: string): void {
    this.table.filter(text);
  }

  destroy(): void {
    this.sparklines.destroy();
  }

  private nameCell(c: ContainerRow): Node {
    const page = this.options.containerPage;
    if (!page) return document.createTextNode(c.name);
    // The link opens the container's page; the row's own click (its actions, its log) is left to the rest of the row.
    return h('a', { href: domainPageHref(page, c.host, c.name), class: 'container-link', onclick: (event) => event.stopPropagation() }, c.name);
  }
}

import { type Column, FleetTable } from '../components/fleet-table.ts';
import { h, replace } from '../dom.ts';
import { formatAgo, formatPercent, formatPorts, formatValue } from '../format.ts';
import type { Widget } from './widget.ts';

type Row = Record<string, unknown>;

const get = (row: Row, path: string): unknown => path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Row)[k] : undefined), row);

const STATUS: Record<string, string> = {
  available: 'online',
  partial: 'warning',
  unavailable: 'offline',
  running: 'online',
  exited: 'offline',
  dead: 'offline',
  restarting: 'warning',
  created: 'stale',
  paused: 'stale',
  failed: 'critical',
  online: 'online',
  stale: 'stale',
  offline: 'offline',
};

/** The first error a host answered with, as one line (where it came from is the row's host). */
const errorOf = (row: Row): string => {
  const first = (Array.isArray(row.errors) ? row.errors[0] : undefined) as { code?: string; message?: string } | undefined;
  return first ? `${first.code ?? 'error'}: ${first.message ?? ''}` : '';
};

/** The exit code the engine's status line names ("Exited (3) 2 minutes ago"), for a container that stopped. */
const exitCodeOf = (row: Row): number | undefined => {
  const match = /^Exited \((\d+)\)/.exec(String(row.status ?? ''));
  return match ? Number(match[1]) : undefined;
};

const portsOf = (row: Row): string => formatPorts(row.ports as Parameters<typeof formatPorts>[0]);

/** Rows and columns for the answers the fleet table shows: hosts (system_status, list_agents) or containers (docker_list). */
function tableOf(structured: Row): { rows: Row[]; columns: Column<Row>[] } {
  const nodes = (Array.isArray(structured.hosts) ? structured.hosts : [structured]) as Row[];
  if (Array.isArray(structured.agents)) {
    return {
      rows: structured.agents as Row[],
      columns: [
        { key: 'name', label: 'host' },
        { key: 'state', label: 'state', status: (r) => STATUS[String(r.state)] },
        {
          key: 'cpu',
          label: 'CPU',
          numeric: true,
          value: (r) => get(r, 'sample.cpu_percent'),
          text: (r) => formatPercent(get(r, 'sample.cpu_percent') as number),
        },
        {
          key: 'memory',
          label: 'memory',
          numeric: true,
          value: (r) => get(r, 'sample.memory_percent'),
          text: (r) => formatPercent(get(r, 'sample.memory_percent') as number),
        },
        { key: 'version', label: 'version' },
      ],
    };
  }
  if (nodes.some((n) => Array.isArray(n.containers))) {
    // A host that could not answer stays in the table as a row of its own, with its error, rather than vanishing.
    return {
      rows: nodes.flatMap((n) =>
        Array.isArray(n.containers)
          ? (n.containers as Row[]).map((c) => ({ ...c, host: n.host }))
          : [{ host: n.host, name: '', state: 'failed', status: errorOf(n), errors: n.errors }],
      ),
      columns: [
        { key: 'host', label: 'host' },
        { key: 'name', label: 'container' },
        { key: 'image', label: 'image' },
        { key: 'state', label: 'state', status: (r) => STATUS[String(r.state)] },
        { key: 'status', label: 'status' },
        { key: 'exit_code', label: 'exit code', numeric: true, value: exitCodeOf, text: (r) => formatValue(exitCodeOf(r)) },
        { key: 'restart_count', label: 'restarts', numeric: true },
        {
          key: 'uptime',
          label: 'started',
          value: (r) => r.started_at_unix_ms,
          text: (r) => (r.state === 'running' ? formatAgo(r.started_at_unix_ms as number) : '–'),
        },
        { key: 'ports', label: 'ports', text: portsOf },
      ],
    };
  }
  return {
    rows: nodes,
    columns: [
      { key: 'host', label: 'host' },
      { key: 'availability', label: 'availability', status: (r) => STATUS[String(r.availability)] },
      { key: 'cpu', label: 'CPU', numeric: true, value: (r) => get(r, 'cpu.usage_percent'), text: (r) => formatPercent(get(r, 'cpu.usage_percent') as number) },
      {
        key: 'memory',
        label: 'memory',
        numeric: true,
        value: (r) => get(r, 'memory.usage_percent'),
        text: (r) => formatPercent(get(r, 'memory.usage_percent') as number),
      },
      { key: 'containers_running', label: 'containers', numeric: true },
      { key: 'os', label: 'OS' },
      { key: 'failed_collectors', label: 'failed collectors', text: (r) => formatValue(r.failed_collectors) },
      { key: 'error', label: 'error', value: errorOf, text: (r) => errorOf(r) || '–' },
    ],
  };
}

export function fleetTableWidget(): Widget {
  const element = h('div', { class: 'widget fleet-table-widget' });
  return {
    element,
    show(answer) {
      if (answer.error) return replace(element, h('p', { class: 'widget-error' }, answer.error.message));
      const { rows, columns } = tableOf(answer.structured ?? {});
      const table = new FleetTable<Row>({ columns, rowKey: (r) => `${formatValue(r.host)}/${formatValue(r.name)}` });
      table.update(rows);
      const search = h('input', { type: 'search', class: 'table-search', placeholder: `search ${rows.length} rows`, 'aria-label': 'search the table' });
      search.addEventListener('input', () => table.filter(search.value));
      replace(element, search, table.element);
    },
  };
}

import { type Column, FleetTable } from '../components/fleet-table.ts';
import { h, replace } from '../dom.ts';
import { formatPercent, formatValue } from '../format.ts';
import type { Widget } from './widget.ts';

type Row = Record<string, unknown>;

const get = (row: Row, path: string): unknown => path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Row)[k] : undefined), row);

const STATUS: Record<string, string> = {
  available: 'online',
  partial: 'warning',
  unavailable: 'offline',
  running: 'online',
  exited: 'offline',
  online: 'online',
  stale: 'stale',
  offline: 'offline',
};

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
    return {
      rows: nodes.flatMap((n) => ((n.containers ?? []) as Row[]).map((c) => ({ ...c, host: n.host }))),
      columns: [
        { key: 'host', label: 'host' },
        { key: 'name', label: 'container' },
        { key: 'image', label: 'image' },
        { key: 'state', label: 'state', status: (r) => STATUS[String(r.state)] },
        { key: 'restart_count', label: 'restarts', numeric: true },
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
      replace(element, table.element);
    },
  };
}

import { callOrThrow } from '../../call-tool.ts';
import { FleetTable } from '../../components/fleet-table.ts';
import { h, replace } from '../../dom.ts';
import { formatAgo, formatPercent } from '../../format.ts';
import { LazySparklines } from '../lazy-sparklines.ts';
import type { Page, PageContext } from '../page.ts';

interface AgentRow {
  name: string;
  state: 'online' | 'stale' | 'offline';
  version: string;
  labels: Record<string, string>;
  last_seen_unix_ms: number | null;
  sample: { cpu_percent: number | null; memory_percent: number | null; disk_percent: number | null; containers_running: number | null } | null;
}

interface FleetStatus {
  healthy: boolean;
  counts: { online: number; stale: number; offline: number; total: number };
  thresholds: { cpu_percent: number; memory_percent: number; disk_percent: number };
  hot_hosts: { host: string; metric: string; value_percent: number; threshold_percent: number; mount?: string }[];
  unavailable_collectors: { host: string; collector: string; reason: string }[];
  absent_collectors: { collector: string; hosts: string[]; reason: string }[];
}

const over = (value: number | null | undefined, threshold: number) =>
  value === null || value === undefined ? undefined : value >= threshold ? 'critical' : value >= threshold * 0.8 ? 'warning' : undefined;

const SAMPLE_REFRESH_MS = 5000;

/** A host's labels as the selectors write them: env=prod, role=web. */
const labelText = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');

/** The fleet at a glance: how many hosts are online, stale or offline, which run hot, which collectors failed, and every host. */
/**
 * Every agent, page after page of list_agents (it answers a page at a time);
 * an agent that moved to the next page while this read is shown once.
 */
async function everyAgent(context: PageContext): Promise<{ agents: AgentRow[] }> {
  const agents = new Map<string, AgentRow>();
  for (let offset: number | undefined = 0; offset !== undefined; ) {
    const page = (await callOrThrow(context.call, 'list_agents', { offset, limit: 500 })) as { agents: AgentRow[]; next_offset?: number };
    for (const agent of page.agents) agents.set(agent.name, agent);
    offset = page.next_offset;
  }
  return { agents: [...agents.values()] };
}

export function overviewPage(context: PageContext): Page {
  let thresholds = { cpu_percent: 90, memory_percent: 85, disk_percent: 90 };
  let lastLoadMs = 0;
  const sparklines = new LazySparklines(context.call, 'host', () => table.element);
  const hostHref = (name: string) => `#/host/${encodeURIComponent(name)}`;
  const table: FleetTable<AgentRow> = new FleetTable<AgentRow>({
    columns: [
      // A link, so the name looks as openable as the row is (the row's click and Enter open it too).
      { key: 'name', label: 'host', cell: (r) => h('a', { href: hostHref(r.name), onclick: (event) => event.stopPropagation() }, r.name) },
      { key: 'state', label: 'state', status: (row) => row.state },
      { key: 'labels', label: 'labels', value: (r) => labelText(r.labels), text: (r) => labelText(r.labels) || '–' },
      {
        key: 'cpu',
        label: 'CPU',
        numeric: true,
        value: (r) => r.sample?.cpu_percent,
        text: (r) => formatPercent(r.sample?.cpu_percent),
        status: (r) => over(r.sample?.cpu_percent, thresholds.cpu_percent),
      },
      { key: 'history', label: 'CPU, last hour', value: (r) => r.sample?.cpu_percent, text: () => '', cell: (r) => sparklines.cell(r.name) },
      {
        key: 'memory',
        label: 'memory',
        numeric: true,
        value: (r) => r.sample?.memory_percent,
        text: (r) => formatPercent(r.sample?.memory_percent),
        status: (r) => over(r.sample?.memory_percent, thresholds.memory_percent),
      },
      {
        key: 'disk',
        label: 'fullest disk',
        numeric: true,
        value: (r) => r.sample?.disk_percent,
        text: (r) => formatPercent(r.sample?.disk_percent),
        status: (r) => over(r.sample?.disk_percent, thresholds.disk_percent),
      },
      {
        key: 'containers',
        label: 'containers',
        numeric: true,
        value: (r) => r.sample?.containers_running,
        text: (r) => String(r.sample?.containers_running ?? '–'),
      },
      { key: 'version', label: 'version' },
      { key: 'last_seen_unix_ms', label: 'last seen', value: (r) => -(r.last_seen_unix_ms ?? 0), text: (r) => formatAgo(r.last_seen_unix_ms) },
    ],
    rowKey: (row) => row.name,
    onOpen: (row) => context.navigate(hostHref(row.name)),
    empty: 'No agent has enrolled yet: fleetmesh token create prints the command to run on a host.',
  });
  const tiles = h('div', { class: 'tiles' });
  const attention = h('div', { class: 'attention' });
  const element = h('section', { class: 'page overview' }, h('h1', {}, 'Fleet'), tiles, attention, h('h2', {}, 'Hosts'), table.element);

  return {
    element,
    async refresh(uris) {
      const stateChanged = uris.some((u) => u === 'fleet://agents' || u === 'fleet://status');
      // A state change shows at once; fresh samples (every host, every few seconds) at most every few seconds.
      if (uris.length && !stateChanged && !(uris.includes('fleet://samples') && Date.now() - lastLoadMs > SAMPLE_REFRESH_MS)) return;
      lastLoadMs = Date.now();
      const [status, agents] = await Promise.all([
        callOrThrow(context.call, 'get_fleet_status', {}) as Promise<unknown> as Promise<FleetStatus>,
        everyAgent(context),
      ]);
      thresholds = status.thresholds;
      replace(
        tiles,
        (['online', 'stale', 'offline'] as const).map((state) =>
          h('div', { class: `tile status-${state}`, 'data-state': state }, h('span', { class: 'tile-count' }, status.counts[state]), h('span', {}, state)),
        ),
        h(
          'div',
          { class: `tile ${status.healthy ? 'status-ok' : 'status-warning'}` },
          h('span', { class: 'tile-count' }, status.healthy ? '✓' : '!'),
          h('span', {}, status.healthy ? 'healthy' : 'needs attention'),
        ),
      );
      replace(
        attention,
        status.hot_hosts.length
          ? h(
              'div',
              { class: 'panel' },
              h('h2', {}, 'Over thresholds'),
              h(
                'ul',
                {},
                ...status.hot_hosts.map((hot) =>
                  h(
                    'li',
                    { class: 'status-critical' },
                    `${hot.host}: ${hot.metric}${hot.mount ? ` ${hot.mount}` : ''} ${formatPercent(hot.value_percent)} (threshold ${hot.threshold_percent} %)`,
                  ),
                ),
              ),
            )
          : null,
        status.unavailable_collectors.length
          ? h(
              'div',
              { class: 'panel' },
              h('h2', {}, 'Failed collectors'),
              h('ul', {}, ...status.unavailable_collectors.map((c) => h('li', { class: 'status-warning' }, `${c.host}: ${c.collector} — ${c.reason}`))),
            )
          : null,
        // Nothing to collect is no failure: one quiet line per collector, apart from the failure box.
        status.absent_collectors.length
          ? h(
              'p',
              { class: 'absent-collectors' },
              `Not on every host (nothing to collect there): ${status.absent_collectors.map((c) => `${c.collector} on ${c.hosts.join(', ')}`).join('; ')}.`,
            )
          : null,
      );
      table.update(agents.agents);
    },
    destroy() {
      sparklines.destroy();
    },
  };
}

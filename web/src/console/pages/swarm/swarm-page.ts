import { callOrThrow } from '../../../call-tool.ts';
import { FleetTable } from '../../../components/fleet-table.ts';
import { type LogLine, LogViewer } from '../../../components/log-viewer.ts';
import { SwarmTopology, type TopologyAnswer } from '../../../components/swarm/swarm-topology.ts';
import { h, replace } from '../../../dom.ts';
import type { DomainPage, Page, PageContext } from '../../page.ts';
import { objectHref } from '../object-page.ts';

interface Row {
  id: string;
  type: string;
  name: string;
  state?: string;
  detail?: string;
  desired?: number;
  running?: number;
  host?: string;
  cluster?: string;
  stack?: string;
}

/** How often a followed service's log is read again. */
const LOG_POLL_MS = 3000;

/** A row's name as a link to its own page; the row's click (logs, drain impact) is left to the rest of the row. */
const nameLink = (r: Row) => h('a', { href: objectHref(r.type, r.id), onclick: (event: Event) => event.stopPropagation() }, r.name);

/** A table of one of the swarm's object types, each row opening that object's page. */
function objectTable(context: PageContext, label: string, detail: string, empty: string): FleetTable<Row> {
  return new FleetTable<Row>({
    columns: [
      { key: 'name', label, cell: nameLink },
      { key: 'detail', label: detail },
      { key: 'cluster', label: 'swarm' },
    ],
    rowKey: (r) => r.id,
    onOpen: (r) => context.navigate(objectHref(r.type, r.id)),
    empty,
  });
}

/** The swarm: health, topology (placement, networks, drain impact), services, tasks, nodes, secrets, configs and networks, and a service's logs. */
function swarmPage(context: PageContext): Page {
  const summary = h('div', { class: 'swarm-summary' });
  const topology = new SwarmTopology();
  const viewPicker = h('div', { class: 'chip-group' });
  let view: { view: string; node?: string } = { view: 'placement' };
  const logs = h('div', { class: 'swarm-logs' });
  let stopLogs: (() => void) | undefined;
  const services = new FleetTable<Row>({
    columns: [
      { key: 'name', label: 'service', cell: nameLink },
      { key: 'stack', label: 'stack' },
      {
        key: 'replicas',
        label: 'replicas',
        value: (r) => r.running,
        text: (r) => `${r.running ?? '?'} / ${r.desired ?? '?'}`,
        status: (r) => (r.desired !== undefined && r.running !== r.desired ? 'warning' : 'online'),
      },
      { key: 'detail', label: 'image' },
      { key: 'cluster', label: 'swarm' },
    ],
    rowKey: (r) => r.name,
    onOpen: (r) => followService(r.name),
    empty: 'No swarm services (no manager agent reports a swarm).',
  });
  const nodes = new FleetTable<Row>({
    columns: [
      { key: 'name', label: 'node', cell: nameLink },
      { key: 'state', label: 'state', status: (r) => (r.state === 'ready' ? 'online' : 'offline') },
      { key: 'detail', label: 'role' },
    ],
    rowKey: (r) => r.name,
    onOpen: (r) => {
      view = { view: 'drain-impact', node: r.name };
      void refreshTopology();
    },
    empty: 'No swarm nodes.',
  });
  const tasks = new FleetTable<Row>({
    columns: [
      { key: 'name', label: 'task', cell: nameLink },
      {
        key: 'state',
        label: 'state',
        status: (r) => (r.state === 'running' ? 'online' : r.state === 'failed' || r.state === 'rejected' ? 'critical' : 'stale'),
      },
      { key: 'detail', label: 'node' },
    ],
    rowKey: (r) => r.id,
    onOpen: (r) => context.navigate(objectHref(r.type, r.id)),
    empty: 'No tasks.',
  });
  // Secrets are listed by name alone: the swarm never gives their data back, and neither does the index.
  const secrets = objectTable(context, 'secret', 'detail', 'No secrets.');
  const configs = objectTable(context, 'config', 'detail', 'No configs.');
  const networks = objectTable(context, 'network', 'driver', 'No swarm networks.');

  function followService(service: string): void {
    stopLogs?.();
    const viewer = new LogViewer(`service ${service}`);
    let stopped = false;
    const read = async () => {
      if (stopped) return;
      const answer = await context.call('get_logs', { service, tail: 200 });
      if (stopped) return;
      if (answer.error) viewer.setStatus(answer.error.message);
      else {
        const lines = (answer.structured?.lines ?? []) as (LogLine & { task: string; node: string })[];
        viewer.append(lines.map((l) => ({ stream: l.stream, timestamp: l.timestamp, text: l.text, source: l.task })));
        viewer.setStatus(`following · ${new Date().toLocaleTimeString()}`);
      }
      timer = setTimeout(poll, LOG_POLL_MS);
    };
    // A session that ended stops the follow; the page's next refresh asks to sign in again.
    const poll = () => void read().catch((error: Error) => viewer.setStatus(error.message));
    let timer = setTimeout(poll, 0);
    stopLogs = () => {
      stopped = true;
      clearTimeout(timer);
    };
    replace(logs, viewer.element);
  }

  async function refreshTopology(): Promise<void> {
    replace(
      viewPicker,
      ...['placement', 'network'].map((v) =>
        h(
          'button',
          {
            type: 'button',
            class: view.view === v ? 'chip selected' : 'chip',
            onclick: () => {
              view = { view: v };
              void refreshTopology();
            },
          },
          v,
        ),
      ),
      view.node ? h('span', { class: 'chip selected' }, `drain impact of ${view.node}`) : null,
    );
    const answer = await context.call('get_topology', view);
    if (answer.error) replace(topology.element, h('p', { class: 'status-warning' }, answer.error.message));
    else topology.update(answer.structured as unknown as TopologyAnswer);
  }

  return {
    element: h(
      'section',
      { class: 'page swarm' },
      h('h1', {}, 'Swarm'),
      summary,
      h('h2', {}, 'Topology'),
      viewPicker,
      topology.element,
      h('h2', {}, 'Services'),
      services.element,
      logs,
      h('div', { class: 'columns' }, h('div', {}, h('h2', {}, 'Nodes'), nodes.element), h('div', {}, h('h2', {}, 'Tasks'), tasks.element)),
      h(
        'div',
        { class: 'columns' },
        h('div', {}, h('h2', {}, 'Secrets'), secrets.element),
        h('div', {}, h('h2', {}, 'Configs'), configs.element),
        h('div', {}, h('h2', {}, 'Networks'), networks.element),
      ),
    ),
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://index')) return;
      const [status, serviceRows, nodeRows, taskRows, secretRows, configRows, networkRows] = await Promise.all([
        context.call('get_cluster_status', {}),
        callOrThrow(context.call, 'find', { type: 'service', limit: 200 }),
        callOrThrow(context.call, 'find', { type: 'node', limit: 200 }),
        callOrThrow(context.call, 'find', { type: 'task', limit: 200 }),
        callOrThrow(context.call, 'find', { type: 'secret', limit: 200 }),
        callOrThrow(context.call, 'find', { type: 'config', limit: 200 }),
        callOrThrow(context.call, 'find', { type: 'network', limit: 200 }),
      ]);
      const s = status.structured as { health: string; problems: string[] } | undefined;
      replace(
        summary,
        status.error || !s
          ? h('p', { class: 'status-warning' }, status.error?.message ?? 'no answer')
          : h(
              'div',
              {},
              h('p', { class: `status status-${s.health === 'healthy' ? 'online' : s.health === 'degraded' ? 'warning' : 'critical'}` }, s.health),
              h('ul', { class: 'plain' }, ...s.problems.map((p) => h('li', {}, p))),
            ),
      );
      services.update(serviceRows.rows as Row[]);
      nodes.update(nodeRows.rows as Row[]);
      tasks.update(taskRows.rows as Row[]);
      secrets.update(secretRows.rows as Row[]);
      configs.update(configRows.rows as Row[]);
      networks.update(networkRows.rows as Row[]);
      await refreshTopology();
    },
    destroy() {
      stopLogs?.();
    },
  };
}

/** The swarm's page: its services, nodes and tasks, and its topology. */
export const consolePage: DomainPage = { path: 'swarm', label: 'Swarm', rank: 50, open: swarmPage };

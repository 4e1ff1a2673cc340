import type { CallTool } from '../../call-tool.ts';
import { FleetTable } from '../../components/fleet-table.ts';
import { type LogLine, LogViewer } from '../../components/log-viewer.ts';
import { type MetricsAnswer, MetricsChart } from '../../components/metrics-chart.ts';
import { h, replace } from '../../dom.ts';
import { formatAgo, formatBytes, formatDuration, formatPercent, formatTime } from '../../format.ts';
import { ActionProgress } from '../action-progress.ts';
import { type ContainerRow, ContainerTable, containerRows } from '../container-table.ts';
import { domainPageHref, ownPageOf, type Page, type PageContext } from '../page.ts';

type AlertRow = {
  metric: string;
  mount?: string;
  subject?: string;
  state: string;
  detail?: string;
  since_unix_ms?: number | null;
  value_percent: number | null;
  threshold_percent: number | null;
};

/** A figure against its threshold, or a thing another domain watches (a failed unit) in its own words. */
function alertText(row: AlertRow): string {
  if (row.threshold_percent !== null) {
    return `${row.metric}${row.mount ? ` ${row.mount}` : ''}: ${row.state} (${formatPercent(row.value_percent)} of ${row.threshold_percent} %)`;
  }
  const since = row.since_unix_ms ? `, since ${formatAgo(row.since_unix_ms)}` : '';
  return `${row.metric}${row.subject ? ` ${row.subject}` : ''}: ${row.state}${row.detail ? ` (${row.detail})` : ''}${since}`;
}

type Node = Record<string, unknown> & { availability?: string; errors?: { message: string }[] };

type Container = ContainerRow;

/** What each container action does while it runs, and which states offer it. */
const ACTIONS = [
  { tool: 'docker_start', label: 'start', doing: 'starting', offered: (c: Container) => c.state !== 'running' && c.state !== 'restarting' },
  { tool: 'docker_restart', label: 'restart', doing: 'restarting', offered: (c: Container) => c.state === 'running' },
  { tool: 'docker_stop', label: 'stop', doing: 'stopping', offered: (c: Container) => c.state === 'running' || c.state === 'restarting' },
] as const;

/** A host's answer to one tool, or why it has none. */
async function nodeOf(call: CallTool, tool: string, args: Record<string, unknown>): Promise<Node> {
  const answer = await call(tool, args);
  if (answer.error) return { availability: 'unavailable', errors: [answer.error] };
  return (answer.structured ?? {}) as Node;
}

function unavailable(node: Node): HTMLElement | undefined {
  if (node.availability !== 'unavailable') return undefined;
  return h('p', { class: 'status-warning' }, (node.errors ?? []).map((e) => e.message).join('; ') || 'unavailable');
}

/** Follows a container's log: one read of the last lines, then reads of what came since, until stopped. */
function followLogs(call: CallTool, host: string, name: string): { viewer: LogViewer; stop(): void } {
  const viewer = new LogViewer(`${name} on ${host}`);
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      const since = viewer.lastTimestamp;
      const answer = await call('docker_logs', { host, name, timestamps: true, lines: since ? 1000 : 200, ...(since ? { since } : {}), follow_ms: 2000 });
      if (stopped) return;
      if (answer.error) {
        viewer.setStatus(answer.error.message);
        await new Promise((resolve) => setTimeout(resolve, 3000));
        continue;
      }
      viewer.append(((answer.structured?.lines ?? []) as LogLine[]).filter((line) => !since || (line.timestamp ?? '') >= since));
      viewer.setStatus(`following · ${new Date().toLocaleTimeString()}`);
    }
  };
  // A session that ended stops the follow; the page's next refresh asks to sign in again.
  void loop().catch((error: Error) => viewer.setStatus(error.message));
  return {
    viewer,
    stop: () => {
      stopped = true;
    },
  };
}

/** One host: vital signs and their history, containers (with their logs and actions), listening ports, alerts and incidents. */
export function hostPage(context: PageContext, host: string): Page {
  const vitals = h('div', { class: 'vitals' });
  const chart = new MetricsChart((metric, range) => context.call('get_metrics', { target: 'host', id: host, metric, range }).then(metricsOf));
  const containerPage = ownPageOf(context.domainPages, 'container');
  const containers = new ContainerTable({
    call: context.call,
    containerPage,
    fleet: false,
    onOpen: (c) => openContainer(c),
    empty: 'No containers (or no Docker engine on this host).',
  });
  // The domains' pages of one host (its images, units, packages…), linked from here.
  const hostPages = context.domainPages.filter((p) => p.of === 'host');
  const containerPanel = h('div', { class: 'container-panel' });
  const ports = h('div', {});
  const portTable = new FleetTable<{ port: number; protocol: string; address: string; process: string | null; container: string | null }>({
    columns: [
      { key: 'port', label: 'port', numeric: true },
      { key: 'protocol', label: 'protocol' },
      { key: 'address', label: 'address' },
      { key: 'process', label: 'process' },
      { key: 'container', label: 'container' },
    ],
    rowKey: (p) => `${p.protocol}/${p.address}/${p.port}`,
    sortBy: 'port',
    empty: 'No listening ports.',
  });
  const alerts = h('div', {});
  const incidents = h('div', {});
  const containerNote = h('div', {});
  let following: { stop(): void } | undefined;
  let lastVitalsMs = 0;

  /**
   * A container's panel: its actions (only those its state offers; while one
   * runs, the broker's progress for it where its button was and the others
   * disabled), the state an action left it in where the actions are, and its log.
   */
  function openContainer(container: Container): void {
    following?.stop();
    const follow = followLogs(context.call, host, container.name);
    following = follow;
    const outcome = h('p', { class: 'action-outcome', role: 'status', 'aria-live': 'polite' });
    const actions = h('div', { class: 'actions' });
    const drawActions = (current: Container, busy?: { tool: string; progress: ActionProgress }) => {
      replace(
        actions,
        ...ACTIONS.filter((a) => context.may(a.tool) && a.offered(current)).map((a) =>
          // The running action's progress takes its button's place; the others wait, disabled.
          busy?.tool === a.tool
            ? busy.progress.element
            : h(
                'button',
                {
                  type: 'button',
                  class: a.tool === 'docker_stop' ? 'danger' : undefined,
                  'data-tool': a.tool,
                  disabled: busy !== undefined,
                  onclick: () => void run(current, a),
                },
                a.label,
              ),
        ),
      );
    };
    const run = async (current: Container, action: (typeof ACTIONS)[number]) => {
      const progress = new ActionProgress(`${action.doing} ${current.name}`);
      drawActions(current, { tool: action.tool, progress });
      outcome.className = 'action-outcome';
      outcome.textContent = '';
      try {
        const answer = await context.act(action.tool, { host, name: current.name }, progress.update);
        if (!answer) {
          outcome.className = 'action-outcome';
          outcome.textContent = `${action.label} cancelled: ${current.name} is still ${current.state}.`;
          drawActions(current);
          return;
        }
        if (answer.error) {
          outcome.className = 'action-outcome error';
          outcome.textContent = `${action.label} failed: ${answer.error.message}`;
          drawActions(current);
          return;
        }
        const state = (answer.structured ?? {}) as { state?: string; exit_code?: number; started_at_unix_ms?: number | null };
        const next: Container = { ...current, state: state.state ?? current.state, started_at_unix_ms: state.started_at_unix_ms ?? current.started_at_unix_ms };
        outcome.className = 'action-outcome ok';
        outcome.dataset.state = next.state;
        outcome.textContent = `${current.name} is ${next.state}${next.state === 'exited' && state.exit_code !== undefined ? ` (exit code ${state.exit_code})` : ''} after ${action.label}, ${progress.elapsedS.toFixed(1)} s.`;
        drawActions(next);
      } finally {
        progress.stop();
      }
    };
    drawActions(container);
    replace(
      containerPanel,
      h('h3', {}, container.name),
      containerPage ? h('p', {}, h('a', { href: domainPageHref(containerPage, host, container.name) }, 'Configuration, logs and history')) : null,
      actions,
      outcome,
      follow.viewer.element,
    );
    // The panel opens where the reader is looking, not below the fold.
    containerPanel.scrollIntoView({ block: 'nearest' });
  }

  const element = h(
    'section',
    { class: 'page host', 'data-host': host },
    h('h1', {}, host),
    hostPages.length
      ? h('nav', { class: 'host-pages', 'aria-label': 'this host' }, ...hostPages.map((p) => h('a', { href: domainPageHref(p, host) }, p.label)))
      : null,
    vitals,
    h('h2', {}, 'History'),
    chart.element,
    h('h2', {}, 'Containers'),
    containerNote,
    h('div', { class: 'table-frame' }, containers.element),
    containerPanel,
    h(
      'div',
      { class: 'columns' },
      h(
        'div',
        {},
        h('h2', {}, 'Listening ports'),
        ports,
        h('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'listening ports' }, portTable.element),
      ),
      h('div', {}, h('h2', {}, 'Alerts'), alerts),
    ),
    h('h2', {}, 'Incidents'),
    incidents,
  );

  async function refreshVitals(): Promise<void> {
    lastVitalsMs = Date.now();
    const status = await nodeOf(context.call, 'system_status', { host });
    const cpu = status.cpu as { usage_percent: number; cores: number; load_1: number } | undefined;
    const memory = status.memory as { usage_percent: number; used_bytes: number; total_bytes: number } | undefined;
    const disks = (status.disks ?? []) as { mount: string; usage_percent: number; size_bytes?: number }[];
    replace(
      vitals,
      unavailable(status) ??
        h(
          'dl',
          { class: 'vital-signs' },
          h('dt', {}, 'system'),
          h('dd', {}, `${String(status.os ?? '')} · ${String(status.kernel ?? '')} · ${String(status.arch ?? '')}`),
          h('dt', {}, 'uptime'),
          h('dd', {}, formatDuration(status.uptime_s as number)),
          h('dt', {}, 'CPU'),
          h('dd', { 'data-vital': 'cpu' }, cpu ? `${formatPercent(cpu.usage_percent)} of ${cpu.cores} cores · load ${cpu.load_1.toFixed(2)}` : '–'),
          h('dt', {}, 'memory'),
          h(
            'dd',
            { 'data-vital': 'memory' },
            memory ? `${formatPercent(memory.usage_percent)} · ${formatBytes(memory.used_bytes)} of ${formatBytes(memory.total_bytes)}` : '–',
          ),
          h('dt', {}, 'disks'),
          h('dd', {}, disks.map((d) => `${d.mount} ${formatPercent(d.usage_percent)}`).join(' · ') || '–'),
          h('dt', {}, 'sampled'),
          h('dd', {}, formatAgo(status.sampled_at_unix_ms as number)),
        ),
    );
  }

  const page: Page = {
    element,
    async refresh(uris) {
      if (uris.length === 0) {
        await Promise.all([refreshVitals(), chart.show(), refreshLists()]);
        return;
      }
      // Heartbeats come every few seconds: the vital signs follow them, the history gains a point a minute.
      if (uris.includes('fleet://samples') && Date.now() - lastVitalsMs > 5000) await Promise.all([refreshVitals(), chart.show()]);
      if (uris.includes('fleet://index')) await refreshLists();
    },
    destroy() {
      following?.stop();
      chart.destroy();
      containers.destroy();
    },
  };

  async function refreshLists(): Promise<void> {
    const [list, statsNode, portNode, alertNode, incidentNode] = await Promise.all([
      nodeOf(context.call, 'docker_list', { host, all: true }),
      context.may('docker_stats') ? nodeOf(context.call, 'docker_stats', { host }) : Promise.resolve<Node>({ containers: [] }),
      nodeOf(context.call, 'open_ports', { host }),
      nodeOf(context.call, 'alerts', { host }),
      context.may('watch_history') ? nodeOf(context.call, 'watch_history', { host }) : Promise.resolve<Node>({ incidents: [] }),
    ]);
    replace(containerNote, unavailable(list));
    containers.update(containerRows(host, list, statsNode));
    const portRows = (portNode.ports ?? []) as { port: number; protocol: string; address: string; process: string | null; container: string | null }[];
    replace(ports, unavailable(portNode));
    portTable.update(portRows);
    const checks = (alertNode.alerts ?? []) as AlertRow[];
    replace(
      alerts,
      unavailable(alertNode) ?? h('ul', { class: 'plain' }, ...checks.map((c) => h('li', { class: `status-${c.state}`, 'data-state': c.state }, alertText(c)))),
    );
    const incidentRows = (incidentNode.incidents ?? []) as { detected_at_unix_ms: number; container: string; analysis?: string; exit_code?: number | null }[];
    replace(
      incidents,
      unavailable(incidentNode) ??
        (incidentRows.length
          ? h(
              'ul',
              { class: 'plain' },
              ...incidentRows.map((i) =>
                h(
                  'li',
                  {},
                  `${formatTime(i.detected_at_unix_ms)} · ${i.container}${i.exit_code != null ? ` exit ${i.exit_code}` : ''}${i.analysis ? ` · ${i.analysis}` : ''}`,
                ),
              ),
            )
          : h('p', { class: 'empty' }, 'No incidents recorded.')),
    );
  }

  return page;
}

function metricsOf(answer: Awaited<ReturnType<CallTool>>): MetricsAnswer {
  if (answer.error) throw new Error(answer.error.message);
  return answer.structured as unknown as MetricsAnswer;
}

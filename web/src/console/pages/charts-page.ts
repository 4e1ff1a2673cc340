import { callOrThrow } from '../../call-tool.ts';
import { axisLabel } from '../../components/axis-label.ts';
import { type Metric, type MetricsAnswer, MetricsChart, type Range } from '../../components/metrics-chart.ts';
import { h, replace } from '../../dom.ts';
import { formatBytes, formatPercent } from '../../format.ts';
import type { Page, PageContext } from '../page.ts';

interface Ranking extends MetricsAnswer {
  metric: Metric;
  ranking?: { name: string; value: number; host?: string }[];
}

const RANGES: Range[] = ['1h', '6h', '24h', '7d'];
const CHARTS: { metric: Metric; title: string }[] = [
  { metric: 'cpu', title: 'CPU' },
  { metric: 'memory', title: 'Memory' },
  { metric: 'disk', title: 'Disk' },
];
const TOP = 5;

/** History is kept a minute at a time: a newer sample than this changes nothing on screen. */
const RELOAD_MS = 60_000;

function figure(unit: string, value: number): string {
  return unit === 'bytes' ? formatBytes(value) : unit.startsWith('bytes') ? `${formatBytes(value)}/s` : formatPercent(value);
}

/**
 * The fleet's CPU, memory and disk over time, for every host or those a label
 * selector picks (env=prod), and its busiest hosts and containers. Everything
 * comes through get_metrics, as an MCP client would call it, so the signed-in
 * identity's grants decide which hosts and containers count.
 */
export function chartsPage(context: PageContext): Page {
  let selector = '';
  let range: Range = '1h';
  let rankBy: Metric = 'cpu';
  let lastLoadMs = 0;
  /** Loads started; an answer to an older one (another range or selector since) is dropped. */
  let loads = 0;
  const charts = CHARTS.map(({ metric, title }) => ({
    metric,
    chart: new MetricsChart(undefined, { metric, controls: false, title }),
  }));
  const selectorInput = h('input', {
    type: 'text',
    id: 'charts-selector',
    name: 'selector',
    placeholder: 'env=prod',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const problem = h('p', { class: 'error', role: 'alert' });
  const ranges = h('span', { class: 'chip-group', role: 'group', 'aria-label': 'range' });
  const rankChips = h('span', { class: 'chip-group', role: 'group', 'aria-label': 'rank by' });
  const hosts = h('div', { class: 'ranking', 'data-ranking': 'hosts' });
  const containers = h('div', { class: 'ranking', 'data-ranking': 'containers' });
  const scope = h('p', { class: 'charts-scope' });

  const metricsOf = (args: Record<string, unknown>) =>
    callOrThrow(context.call, 'get_metrics', { target: 'fleet', range, ...(selector ? { selector } : {}), ...args }) as Promise<unknown> as Promise<Ranking>;

  const chips = <T extends string>(into: HTMLElement, values: readonly T[], current: T, pick: (value: T) => void) =>
    replace(
      into,
      values.map((value) =>
        h(
          'button',
          { type: 'button', class: value === current ? 'chip selected' : 'chip', 'aria-pressed': String(value === current), onclick: () => pick(value) },
          value,
        ),
      ),
    );

  const rankingTable = (answer: Ranking, kind: 'host' | 'container'): HTMLElement => {
    const rows = answer.ranking ?? [];
    const valueHeader = axisLabel(answer.metric, answer);
    if (rows.length === 0) return h('p', { class: 'empty' }, `No ${kind} has a ${answer.metric === 'cpu' ? 'CPU' : answer.metric} figure in this range yet.`);
    return h(
      'table',
      { class: 'ranking-table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, '#'),
          h('th', { scope: 'col' }, kind),
          h('th', { scope: 'col', class: 'numeric' }, `${valueHeader}, mean over ${range}`),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((row, i) =>
          h(
            'tr',
            {},
            h('td', {}, i + 1),
            h('td', {}, kind === 'host' ? h('a', { href: `#/host/${encodeURIComponent(row.name)}` }, row.name) : row.name),
            h('td', { class: 'numeric' }, figure(answer.unit, row.value)),
          ),
        ),
      ),
    );
  };

  const loadRankings = async () => {
    chips(rankChips, ['cpu', 'memory', 'disk'] as Metric[], rankBy, (value) => {
      rankBy = value;
      void loadRankings().catch(report);
    });
    const [topHosts, topContainers] = await Promise.all([
      metricsOf({ metric: rankBy, top: TOP, by: 'node' }),
      // Disk is a figure of hosts: a container has none to rank.
      rankBy === 'disk' ? undefined : metricsOf({ metric: rankBy, top: TOP, by: 'container' }),
    ]);
    replace(hosts, h('h3', {}, 'Busiest hosts'), rankingTable(topHosts, 'host'));
    replace(
      containers,
      h('h3', {}, 'Busiest containers'),
      topContainers ? rankingTable(topContainers, 'container') : h('p', { class: 'empty' }, 'Disk is measured per host: rank containers by cpu or memory.'),
    );
  };

  const load = async () => {
    lastLoadMs = Date.now();
    chips(ranges, RANGES, range, (value) => {
      range = value;
      void load().catch(report);
    });
    // One answer for all three or none: a bad selector is said once, above them.
    const turn = ++loads;
    const answers = await Promise.all(charts.map(({ metric }) => metricsOf({ metric })));
    if (turn !== loads) return;
    charts.forEach(({ chart }, i) => {
      const answer = answers[i];
      if (answer) chart.draw(answer);
    });
    await loadRankings();
    problem.textContent = '';
    scope.textContent = selector ? `Hosts whose labels match ${selector}, that you may read.` : 'Every host you may read.';
  };

  const report = (error: Error) => {
    problem.textContent = error.message;
  };

  const form = h(
    'form',
    { class: 'charts-filter', role: 'search', 'aria-label': 'hosts to chart' },
    h('label', { for: 'charts-selector' }, 'Label selector'),
    selectorInput,
    h('button', { type: 'submit' }, 'Apply'),
    ranges,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    selector = selectorInput.value.trim();
    void load().catch(report);
  });

  const element = h(
    'section',
    { class: 'page charts' },
    h('h1', {}, 'Charts'),
    form,
    problem,
    scope,
    h(
      'div',
      { class: 'charts-grid' },
      charts.map(({ chart }) => chart.element),
    ),
    h(
      'section',
      { class: 'rankings', 'aria-labelledby': 'charts-busiest' },
      h('h2', { id: 'charts-busiest' }, 'Busiest'),
      h('div', { class: 'chart-controls' }, 'Rank by ', rankChips),
      h('div', { class: 'rankings-grid' }, hosts, containers),
    ),
  );

  return {
    element,
    async refresh(uris) {
      if (uris.length && !(uris.includes('fleet://samples') && Date.now() - lastLoadMs > RELOAD_MS)) return;
      await load();
    },
    destroy() {
      for (const { chart } of charts) chart.destroy();
    },
  };
}

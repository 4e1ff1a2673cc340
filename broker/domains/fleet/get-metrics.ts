import { getMetrics } from '../../../shared/domains/fleet/index-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Host } from '../../agents/agent-registry.ts';
import { mayRead } from '../../auth/visibility.ts';
import { type BrokerActionContext, defineBrokerAction } from '../../calls/broker-action.ts';
import { parseSelector } from '../../calls/selector.ts';
import type { MetricRow } from '../../metrics/usage-history.ts';
import type { EntityMean } from '../../store/metrics-table.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { type SeriesSummary, summarizeSeries } from './series-summary.ts';

const RANGES = { '1h': [3_600_000, 60_000], '6h': [21_600_000, 300_000], '24h': [86_400_000, 900_000], '7d': [604_800_000, 7_200_000] } as const;
const UNITS = { cpu: 'percent', memory: 'bytes', disk: 'percent', network: 'bytes_per_second' } as const;
const SERVICES = new Set(['service']);

type Metric = keyof typeof UNITS;

/** What a series is made of: a row of the history, or a service's sums of one minute (which has no disk). */
type Figures = Pick<MetricRow, 'minute' | 'cpu_percent' | 'memory_bytes' | 'net_bytes_per_s'> & { disk_percent?: number | null };

function figureOf(row: Omit<Figures, 'minute'>, metric: Metric): number | null {
  if (metric === 'disk') return row.disk_percent ?? null;
  return metric === 'cpu' ? row.cpu_percent : metric === 'memory' ? row.memory_bytes : row.net_bytes_per_s;
}

/**
 * Sums a group's rows per minute (a service over its containers, a cluster
 * over its hosts), or with `mean` averages them (the fleet's percentages: a
 * hundred hosts at half load are a fleet at 50 %, not 5,000 %), then averages
 * per bucket.
 */
function seriesOf(
  rows: readonly Figures[],
  metric: Metric,
  since: number,
  step: number,
  now: number,
  perMinuteOf: 'sum' | 'mean' = 'sum',
): { points: { t: number; v: number | null }[]; summary: SeriesSummary; mean: number } {
  const sums = new Map<number, { total: number; count: number }>();
  for (const row of rows) {
    const value = figureOf(row, metric);
    if (value === null) continue;
    const sum = sums.get(row.minute) ?? { total: 0, count: 0 };
    sum.total += value;
    sum.count += 1;
    sums.set(row.minute, sum);
  }
  const perMinute = new Map([...sums].map(([minute, sum]) => [minute, perMinuteOf === 'mean' ? sum.total / sum.count : sum.total]));
  const points: { t: number; v: number | null }[] = [];
  let total = 0;
  let count = 0;
  for (let t = Math.floor(since / step) * step; t <= now; t += step) {
    const values = [...perMinute].filter(([minute]) => minute >= t && minute < t + step).map(([, v]) => v);
    const v = values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
    if (v !== null) {
      total += v;
      count += 1;
    }
    points.push({ t, v: v === null ? null : Math.round(v * 100) / 100 });
  }
  return { points, summary: summarizeSeries(points), mean: count ? total / count : 0 };
}

/** A host by its id, name or host name, or another name a domain knows it by (a cluster's node id). */
function findHost(hosts: Host[], wanted: string, domains: readonly BrokerDomain[]): Host {
  const lower = wanted.toLowerCase();
  const host = hosts.find(
    (h) =>
      h.id === wanted ||
      h.name.toLowerCase() === lower ||
      domains.some((broker) => broker.hostAliases?.(h).includes(wanted)) ||
      String(h.hello?.facts.hostname ?? '').toLowerCase() === lower,
  );
  if (!host)
    throw new FleetError('not_found', `no host or node is called "${wanted}"`, {
      hint: 'list_agents lists the hosts; find with type node the nodes of clusters.',
    });
  return host;
}

function rank(groups: Map<string, { rows: readonly Figures[]; host?: string }>, metric: Metric, since: number, step: number, now: number, top: number) {
  return [...groups]
    .map(([name, group]) => ({
      name,
      value: Math.round(seriesOf(group.rows, metric, since, step, now).mean * 100) / 100,
      ...(group.host ? { host: group.host } : {}),
    }))
    .sort((a, b) => b.value - a.value)
    .slice(0, top);
}

function groupBy<R extends Figures>(
  rows: readonly R[],
  key: (row: R) => string | null,
  hostOf?: (row: R) => string,
): Map<string, { rows: R[]; host?: string }> {
  const groups = new Map<string, { rows: R[]; host?: string }>();
  for (const row of rows) {
    const name = key(row);
    if (name === null) continue;
    const group = groups.get(name) ?? { rows: [], ...(hostOf ? { host: hostOf(row) } : {}) };
    group.rows.push(row);
    groups.set(name, group);
  }
  return groups;
}

/**
 * The rows a container id of get_metrics could name: HOST/NAME, or a name or
 * a full container id on any host. Read by name or by id from the store, not
 * by reading every container's rows of the range.
 */
async function containerRows(context: BrokerActionContext, wanted: string, slash: number, since: number): Promise<MetricRow[]> {
  if (slash > 0) {
    const host = context.registry.find(wanted.slice(0, slash));
    return host ? context.metrics.rows('container', { hostId: host.id, name: wanted.slice(slash + 1) }, since) : [];
  }
  const byName = await context.metrics.rows('container', { name: wanted }, since);
  const byId = await context.metrics.rows('container', { entities: context.registry.list().map((host) => `${host.id}/${wanted}`) }, since);
  const seen = new Set(byName.map((row) => `${row.entity}|${row.minute}`));
  return [...byName, ...byId.filter((row) => !seen.has(`${row.entity}|${row.minute}`))];
}

/** get_metrics: series or rankings from the broker's own minute history. */
export const getMetricsHandler = defineBrokerAction({
  action: getMetrics,
  async run(params, context) {
    const metric = (params.metric ?? 'cpu') as Metric;
    const range = params.range ?? '1h';
    const [span, step] = RANGES[range];
    const now = Date.now();
    const since = now - span;
    const hosts = context.visibleHosts();
    const hostName = (id: string) => context.registry.get(id)?.name ?? id;
    const canSeeContainer = (row: Pick<MetricRow, 'name' | 'host_id'>) =>
      mayRead(context.identity, { type: 'container', name: row.name, host: hostName(row.host_id) });
    const common = { target: params.target, metric, range, unit: UNITS[metric], step_s: step / 1000 };
    // A host's CPU figure is of its whole machine, a container's (docker stats) of one core.
    const of = (rows: 'host' | 'container') => ({
      ...common,
      ...(metric === 'cpu' ? { percent_of: rows === 'host' ? ('machine' as const) : ('one core' as const) } : {}),
    });
    const base = of('container');
    const top = params.top;
    const hostFigure = params.target === 'fleet' || params.target === 'cluster' || params.target === 'host' || params.target === 'node';
    const ranksContainers = top !== undefined && (params.by === 'container' || params.by === 'service' || (params.target !== 'fleet' && params.by !== 'node'));
    if (metric === 'disk' && (!hostFigure || ranksContainers))
      throw new FleetError('invalid_argument', 'disk is a figure of hosts (their fullest disk), not of containers or services', {
        hint: 'Ask for disk with target host, node, cluster or fleet, and top with by node.',
      });

    if (params.target === 'fleet') return fleetMetrics(params, context, { metric, since, step, now, hostName, canSeeContainer });

    if (params.target === 'host' || params.target === 'node') {
      if (!params.id) throw new FleetError('invalid_argument', `target ${params.target} needs id`, { hint: 'list_agents lists the hosts.' });
      // A host's own figures need a grant on the host; one on some of its containers does not do.
      const host = findHost(
        hosts.filter((h) => mayRead(context.identity, { type: 'host', name: h.name })),
        params.id,
        context.index.domains,
      );
      if (top) {
        const rows = (await context.metrics.rows('container', { hostId: host.id }, since)).filter(canSeeContainer);
        const by = params.by ?? (params.target === 'node' ? 'service' : 'container');
        const groups = groupBy(rows, (row) => (by === 'service' ? row.service : row.name));
        return { ...base, id: host.name, series: [], ranking: rank(groups, metric, since, step, now, top) };
      }
      const s = seriesOf(await context.metrics.rows('host', { entities: [host.id] }, since), metric, since, step, now);
      return { ...of('host'), id: host.name, series: [{ name: host.name, ...s.summary, points: s.points }] };
    }

    if (params.target === 'container') {
      if (!params.id) throw new FleetError('invalid_argument', 'target container needs id', { hint: 'docker_list or find with type container lists them.' });
      const wanted = params.id;
      const slash = wanted.indexOf('/');
      const rows = (await containerRows(context, wanted, slash, since)).filter(canSeeContainer);
      const matching = rows.filter((row) =>
        slash > 0
          ? hostName(row.host_id) === wanted.slice(0, slash) && row.name === wanted.slice(slash + 1)
          : row.name === wanted || row.entity.endsWith(`/${wanted}`),
      );
      const entities = [...new Set(matching.map((r) => r.entity))];
      if (entities.length === 0)
        throw new FleetError('not_found', `no history of a container "${wanted}"`, {
          hint: 'Containers are sampled once a minute; a new one shows after its first minute.',
        });
      if (entities.length > 1) {
        throw new FleetError('ambiguous', `"${wanted}" names containers on several hosts`, {
          hint: `Give host/name: ${[...new Set(matching.map((r) => `${hostName(r.host_id)}/${r.name}`))].join(', ')}.`,
        });
      }
      const s = seriesOf(matching, metric, since, step, now);
      return { ...base, id: wanted, series: [{ name: wanted, ...s.summary, points: s.points }] };
    }

    if (params.target === 'service') {
      if (!params.id) throw new FleetError('invalid_argument', 'target service needs id', { hint: 'find with type service lists them.' });
      const wanted = params.id;
      const serviceName = context.index.rows({ types: SERVICES, match: (id, name) => id === wanted || name === wanted })[0]?.row.name ?? wanted;
      if (!mayRead(context.identity, { type: 'service', name: serviceName }))
        throw new FleetError('not_found', `no service "${params.id}"`, { hint: 'find with type service lists them.' });
      const rows = await context.metrics.rows('container', { service: serviceName }, since);
      if (top) {
        const groups = groupBy(rows, (row) => (params.by === 'node' ? hostName(row.host_id) : `${hostName(row.host_id)}/${row.name}`));
        return { ...base, id: serviceName, series: [], ranking: rank(groups, metric, since, step, now, top) };
      }
      const s = seriesOf(rows, metric, since, step, now);
      return { ...base, id: serviceName, series: [{ name: serviceName, ...s.summary, points: s.points }] };
    }

    // cluster: the hosts of a domain's group (a cluster's nodes), or every visible host when the fleet has no group.
    const groups = context.index.domains.flatMap((broker) => broker.hostGroups?.(context) ?? []);
    const group = params.id
      ? groups.find((g) => g.id === params.id || g.name === params.id || g.id.startsWith(params.id ?? ''))
      : groups.length === 1
        ? groups[0]
        : undefined;
    if (params.id && !group)
      throw new FleetError('not_found', `no cluster is called "${params.id}"`, { hint: `Clusters: ${groups.map((g) => g.name).join(', ') || 'none'}.` });
    const memberIds = new Set(group?.hostIds ?? []);
    const members = group ? hosts.filter((h) => memberIds.has(h.id)) : hosts;
    const ids = members.map((h) => h.id);
    const label = group?.name ?? 'fleet';
    if (top) {
      if (params.by === 'node') {
        const groups = groupBy(await context.metrics.rows('host', { entities: ids }, since), (row) => hostName(row.host_id));
        return { ...of('host'), id: label, series: [], ranking: rank(groups, metric, since, step, now, top) };
      }
      const minutes = await context.metrics.serviceMinutes(ids, since);
      const groups = groupBy(
        minutes.filter((minute) => mayRead(context.identity, { type: 'service', name: minute.service })),
        (minute) => minute.service,
      );
      return { ...base, id: label, series: [], ranking: rank(groups, metric, since, step, now, top) };
    }
    const s = seriesOf(await context.metrics.rows('host', { entities: ids }, since), metric, since, step, now);
    return { ...of('host'), id: label, series: [{ name: label, ...s.summary, points: s.points }] };
  },
});

/**
 * The fleet, or the hosts a label selector picks (env=prod): the hosts this
 * identity may read, their mean CPU and disk and summed memory and network
 * per minute, or with top the busiest hosts (by node, the default), containers
 * or services among them. A host or container ranks by the mean of its
 * minutes in the range; one that never had the figure is left out.
 */
async function fleetMetrics(
  params: { selector?: string | undefined; range?: string | undefined; top?: number | undefined; by?: 'service' | 'node' | 'container' | undefined },
  context: BrokerActionContext,
  at: {
    metric: Metric;
    since: number;
    step: number;
    now: number;
    hostName: (id: string) => string;
    canSeeContainer: (row: Pick<MetricRow, 'name' | 'host_id'>) => boolean;
  },
) {
  const { metric, since, step, now, hostName, canSeeContainer } = at;
  const matches = params.selector ? parseSelector(params.selector) : () => true;
  const members = context.visibleHosts().filter((h) => mayRead(context.identity, { type: 'host', name: h.name }) && matches(h.labels));
  const ids = members.map((h) => h.id);
  const label = params.selector ? `fleet ${params.selector}` : 'fleet';
  const answer = {
    target: 'fleet',
    id: label,
    metric,
    range: params.range ?? '1h',
    unit: UNITS[metric],
    step_s: step / 1000,
  };
  const by = params.by ?? 'node';
  const percentOf = (of: 'machine' | 'one core') => (metric === 'cpu' ? { percent_of: of } : {});
  if (params.top && (by === 'node' || by === 'container')) {
    // Each host's or container's mean over the range, averaged by the store: one row each, not one a minute.
    const kind = by === 'node' ? 'host' : 'container';
    const ranking = (await context.metrics.means(kind, ids, since))
      .filter((mean) => kind === 'host' || canSeeContainer(mean))
      .map((mean) => ({ mean, value: figureOf(mean, metric) }))
      .filter((entry): entry is { mean: EntityMean; value: number } => entry.value !== null)
      .sort((a, b) => b.value - a.value)
      .slice(0, params.top)
      .map(({ mean, value }) => ({
        name: kind === 'host' ? hostName(mean.host_id) : `${hostName(mean.host_id)}/${mean.name}`,
        value: Math.round(value * 100) / 100,
        ...(kind === 'container' ? { host: hostName(mean.host_id) } : {}),
      }));
    return { ...answer, ...percentOf(kind === 'host' ? 'machine' : 'one core'), series: [], ranking };
  }
  if (params.top) {
    const minutes = await context.metrics.serviceMinutes(ids, since);
    const groups = groupBy(
      minutes.filter((minute) => mayRead(context.identity, { type: 'service', name: minute.service })),
      (minute) => minute.service,
    );
    return { ...answer, ...percentOf('one core'), series: [], ranking: rank(groups, metric, since, step, now, params.top) };
  }
  const perMinute = metric === 'cpu' || metric === 'disk' ? 'mean' : 'sum';
  const s = seriesOf(await context.metrics.rows('host', { entities: ids }, since), metric, since, step, now, perMinute);
  return { ...answer, ...percentOf('machine'), series: [{ name: label, ...s.summary, points: s.points }] };
}

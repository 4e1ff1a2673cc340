import type { CallTool } from '../../../call-tool.ts';
import { FleetTable } from '../../../components/fleet-table.ts';
import type { LogLine } from '../../../components/log-viewer.ts';
import { type MetricsAnswer, MetricsChart } from '../../../components/metrics-chart.ts';
import { h, replace } from '../../../dom.ts';
import { formatPorts, formatTime } from '../../../format.ts';
import { answerProblem } from '../../answer-problem.ts';
import type { DomainPage, Page, PageContext } from '../../page.ts';

/** docker_inspect's answer, as far as this page reads it. */
interface Inspected {
  id: string;
  image: string;
  image_id: string;
  created_unix_ms: number;
  state: {
    status: string;
    exit_code: number;
    oom_killed: boolean;
    started_at_unix_ms: number | null;
    finished_at_unix_ms: number | null;
    restart_count: number;
    error: string;
  };
  health: { status: string; failing_streak: number; last_output: string | null } | null;
  restart_policy: { name: string; maximum_retry_count: number };
  ports: { private_port: number; public_port: number | null; protocol: string; ip: string | null }[];
  mounts: { type: string; source: string; destination: string; mode: string; rw: boolean }[];
  networks: { name: string; ip_address: string; gateway: string }[];
  command: string[];
  entrypoint: string[];
  labels: Record<string, string>;
  env_names: string[];
}

interface EngineEvent {
  time_unix_ms: number;
  action: string;
  name: string;
  exit_code?: number;
}

interface AuditRow {
  seq: number;
  startedAt: number;
  identity: string;
  tool: string;
  targets: string[];
  arguments: Record<string, unknown>;
  outcome: string;
  errorCode: string | null;
}

/** Log lines read at a time; the page shows them newest first. */
const LOG_LINES = 200;
/** Audit rows searched for the calls that named this container (the newest ones). */
const AUDIT_ROWS = 1000;

/** An argument list as a shell would read it back: plain words bare, anything else in single quotes. */
function argvText(argv: readonly string[]): string {
  return argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(' ');
}

/** A list of terms and their values, each value text (it comes from the container's host). */
function fields(entries: [string, string | Node][]): HTMLElement {
  return h('dl', { class: 'object-details' }, ...entries.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
}

/** A table of plain rows, keyed by their first column. */
function simpleTable<R extends Record<string, unknown>>(columns: [keyof R & string, string][], rows: R[], empty: string): HTMLElement {
  const table = new FleetTable<R>({ columns: columns.map(([key, label]) => ({ key, label })), rowKey: (r) => String(r[columns[0]?.[0] ?? '']), empty });
  table.update(rows);
  return table.element;
}

function configuration(c: Inspected): HTMLElement[] {
  const labels = Object.entries(c.labels).sort(([a], [b]) => a.localeCompare(b));
  return [
    fields([
      ['image', `${c.image} (${c.image_id.slice(0, 19)})`],
      ['entrypoint', c.entrypoint.length ? argvText(c.entrypoint) : '–'],
      ['command', c.command.length ? argvText(c.command) : '–'],
      [
        'state',
        `${c.state.status}${c.state.status === 'exited' ? `, exit code ${c.state.exit_code}` : ''}${c.state.oom_killed ? ', killed out of memory' : ''}`,
      ],
      ['started', formatTime(c.state.started_at_unix_ms)],
      ['finished', c.state.finished_at_unix_ms ? formatTime(c.state.finished_at_unix_ms) : '–'],
      ['restarts', String(c.state.restart_count)],
      ['restart policy', `${c.restart_policy.name || 'no'}${c.restart_policy.maximum_retry_count ? ` (at most ${c.restart_policy.maximum_retry_count})` : ''}`],
      [
        'health',
        c.health
          ? `${c.health.status}${c.health.failing_streak ? `, ${c.health.failing_streak} failing in a row` : ''}${c.health.last_output ? ` — ${c.health.last_output.trim()}` : ''}`
          : 'no health check',
      ],
      ['ports', formatPorts(c.ports)],
      ['created', formatTime(c.created_unix_ms)],
      ['id', c.id],
    ]),
    h('h3', {}, 'Environment'),
    // docker_inspect answers the names alone: a value (a password, a key) never leaves the host, so none is shown or needs masking.
    c.env_names.length
      ? h(
          'ul',
          { class: 'plain env-names' },
          ...[...c.env_names].sort().map((name) => h('li', {}, h('code', {}, name), h('span', { class: 'muted' }, ' = value kept on the host'))),
        )
      : h('p', { class: 'empty' }, 'No environment variables.'),
    h('h3', {}, 'Mounts'),
    simpleTable(
      [
        ['destination', 'in the container'],
        ['type', 'type'],
        ['source', 'source'],
        ['access', 'access'],
      ],
      c.mounts.map((m) => ({ ...m, access: m.rw ? 'read-write' : 'read-only' })),
      'No mounts.',
    ),
    h('h3', {}, 'Networks'),
    simpleTable(
      [
        ['name', 'network'],
        ['ip_address', 'address'],
        ['gateway', 'gateway'],
      ],
      c.networks,
      'No networks.',
    ),
    h('h3', {}, 'Labels'),
    simpleTable(
      [
        ['key', 'label'],
        ['value', 'value'],
      ],
      labels.map(([key, value]) => ({ key, value })),
      'No labels.',
    ),
  ];
}

function logList(lines: LogLine[]): HTMLElement {
  const newestFirst = [...lines].reverse();
  return h(
    'ol',
    { class: 'log-lines newest-first' },
    ...newestFirst.map((line) =>
      h(
        'li',
        { class: `log-line ${line.stream}`, 'data-stream': line.stream },
        line.timestamp ? h('time', { datetime: line.timestamp, title: line.timestamp }, formatTime(Date.parse(line.timestamp))) : null,
        h('span', { class: 'log-text' }, line.text),
      ),
    ),
  );
}

/**
 * One container: its configuration (image, command, environment names,
 * mounts, ports, networks, labels, health), its usage over time, its log
 * newest first with timestamps, and its history: the engine's events for it
 * and the audited calls that named it. Everything is read through the tools
 * an MCP client calls, with this identity's level and grants.
 */
function containerPage(context: PageContext, arg: string): Page {
  const [host = '', name = ''] = arg.split('/').map(decodeURIComponent);
  const call: CallTool = context.call;
  const state = h('p', { class: 'object-state' });
  const config = h('div', { class: 'container-config' });
  const chart = new MetricsChart((metric, range) =>
    call('get_metrics', { target: 'container', id: `${host}/${name}`, metric, range }).then((answer) => {
      if (answer.error) throw new Error(answer.error.message);
      return answer.structured as unknown as MetricsAnswer;
    }),
  );
  const logStatus = h('span', { class: 'log-status' });
  const logs = h('div', {});
  const events = h('div', {});
  const audit = h('div', {});

  async function readLogs(): Promise<void> {
    logStatus.textContent = 'reading…';
    const answer = await call('docker_logs', { host, name, timestamps: true, lines: LOG_LINES });
    const lines = (answer.structured?.lines ?? []) as LogLine[];
    replace(logs, answerProblem(answer) ?? logList(lines));
    logStatus.textContent = answer.error ? '' : `${lines.length} newest lines, read ${new Date().toLocaleTimeString()}`;
  }

  async function readHistory(): Promise<void> {
    const [eventAnswer, rows] = await Promise.all([
      call('docker_events', { host, name, limit: 100 }),
      context.me.audit ? context.api.audit({}, AUDIT_ROWS) : Promise.resolve(undefined),
    ]);
    // The engine's filter is "name contains": keep this container's own.
    const mine = ((eventAnswer.structured?.events ?? []) as EngineEvent[]).filter((e) => e.name === name);
    replace(
      events,
      answerProblem(eventAnswer) ??
        (mine.length
          ? h(
              'ol',
              { class: 'plain engine-events' },
              ...mine.map((e) =>
                h(
                  'li',
                  { 'data-action': e.action },
                  `${formatTime(e.time_unix_ms)} · ${e.action}${e.exit_code !== undefined ? ` (exit code ${e.exit_code})` : ''}`,
                ),
              ),
            )
          : h('p', { class: 'empty' }, 'No engine events since the agent started.')),
    );
    if (!rows) {
      replace(audit, h('p', { class: 'muted' }, 'The audit log is for level-3 identities.'));
      return;
    }
    const calls = (rows as unknown as AuditRow[]).filter((r) => r.targets.includes(host) && r.arguments.name === name);
    replace(
      audit,
      calls.length
        ? h(
            'ol',
            { class: 'plain audited-calls' },
            ...calls.map((r) =>
              h(
                'li',
                { 'data-tool': r.tool },
                `${formatTime(r.startedAt)} · ${r.tool} by ${r.identity || '?'} · ${r.outcome}${r.errorCode ? ` (${r.errorCode})` : ''}`,
              ),
            ),
          )
        : h('p', { class: 'empty' }, `No audited call named ${name} among the newest ${AUDIT_ROWS}.`),
    );
  }

  async function readConfiguration(): Promise<void> {
    const answer = await call('docker_inspect', { host, name });
    const inspected = answer.structured as unknown as Inspected | undefined;
    if (answer.error || !inspected) {
      replace(state, answerProblem(answer));
      replace(config);
      return;
    }
    replace(
      state,
      h(
        'span',
        { class: `status status-${inspected.state.status === 'running' ? 'online' : 'offline'}`, 'data-state': inspected.state.status },
        inspected.state.status,
      ),
      ' on ',
      h('a', { href: `#/host/${encodeURIComponent(host)}` }, host),
    );
    replace(config, ...configuration(inspected));
  }

  return {
    element: h(
      'section',
      { class: 'page container', 'data-host': host, 'data-name': name },
      h('h1', {}, 'container ', h('span', { class: 'object-name' }, name)),
      state,
      h('h2', {}, 'Configuration'),
      config,
      h('h2', {}, 'Usage'),
      chart.element,
      h('h2', {}, 'Log, newest first'),
      h(
        'section',
        { class: 'log-viewer' },
        h(
          'header',
          {},
          h('h3', {}, `${name} on ${host}`),
          h('button', { type: 'button', class: 'chip', onclick: () => void readLogs() }, 'read again'),
          logStatus,
        ),
        logs,
      ),
      h('div', { class: 'columns' }, h('div', {}, h('h2', {}, 'Engine events'), events), h('div', {}, h('h2', {}, 'Audited calls'), audit)),
    ),
    async refresh(uris) {
      if (uris.length === 0) {
        await Promise.all([readConfiguration(), chart.show(), readLogs(), readHistory()]);
        return;
      }
      if (uris.includes('fleet://index')) await Promise.all([readConfiguration(), readHistory()]);
    },
    destroy() {
      chart.destroy();
    },
  };
}

/** A container's own page, linked from every list of containers as `#/container/HOST/NAME`. */
export const consolePage: DomainPage = { path: 'container', label: 'Container', rank: 40, of: 'object', objectType: 'container', open: containerPage };

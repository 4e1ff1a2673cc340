import { FleetTable } from '../../components/fleet-table.ts';
import { h } from '../../dom.ts';
import { formatTime, formatValue } from '../../format.ts';
import type { Page, PageContext } from '../page.ts';

interface AuditRow {
  seq: number;
  startedAt: number;
  durationMs: number | null;
  identity: string;
  tool: string;
  targets: string[];
  arguments: Record<string, unknown>;
  outcome: string;
  errorCode: string | null;
  source: string | null;
  reason: string | null;
}

const OUTCOME: Record<string, string> = { ok: 'online', partial: 'warning', error: 'critical', refused: 'warning', pending: 'stale', interrupted: 'critical' };
const OUTCOMES = ['ok', 'partial', 'error', 'refused', 'pending', 'cancelled', 'interrupted'];
/** The time ranges offered, in hours back from now ('' = all time). */
const RANGES: [string, string][] = [
  ['', 'any time'],
  ['1', 'last hour'],
  ['24', 'last 24 hours'],
  ['168', 'last 7 days'],
];

function formatDurationMs(ms: number | null): string {
  if (ms === null) return '–';
  return ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/**
 * Every call of level 1 or more and every refusal, newest first (level-3
 * identities only), filtered by identity, tool, outcome and time range on the
 * broker, with each call's duration; the table scrolls sideways inside its
 * frame rather than cutting the reason off.
 */
export function auditPage(context: PageContext): Page {
  const table = new FleetTable<AuditRow>({
    columns: [
      { key: 'startedAt', label: 'started', text: (r) => formatTime(r.startedAt) },
      { key: 'durationMs', label: 'took', numeric: true, text: (r) => formatDurationMs(r.durationMs) },
      { key: 'identity', label: 'identity or source', text: (r) => r.identity || `source ${r.source ?? '?'}` },
      { key: 'tool', label: 'tool' },
      { key: 'targets', label: 'targets', text: (r) => r.targets.join(', ') || '–' },
      { key: 'outcome', label: 'outcome', status: (r) => OUTCOME[r.outcome] },
      { key: 'errorCode', label: 'error', text: (r) => r.errorCode ?? '–' },
      { key: 'arguments', label: 'arguments', text: (r) => formatValue(r.arguments) },
      { key: 'reason', label: 'reason', text: (r) => r.reason ?? '' },
    ],
    rowKey: (r) => String(r.seq),
    sortBy: 'startedAt',
    sortDescending: true,
    empty: 'No audit row matches.',
  });
  const identity = h('input', { type: 'search', name: 'identity', placeholder: 'identity', 'aria-label': 'identity' });
  const tool = h(
    'select',
    { name: 'tool', 'aria-label': 'tool' },
    h('option', { value: '' }, 'any tool'),
    ...context.me.tools.map((t) => h('option', { value: t.tool }, t.tool)),
  );
  const outcome = h(
    'select',
    { name: 'outcome', 'aria-label': 'outcome' },
    h('option', { value: '' }, 'any outcome'),
    ...OUTCOMES.map((o) => h('option', { value: o }, o)),
  );
  const range = h('select', { name: 'range', 'aria-label': 'time range' }, ...RANGES.map(([hours, label]) => h('option', { value: hours }, label)));
  const status = h('span', { class: 'audit-status', role: 'status' });
  const load = async () => {
    const hours = Number(range.value);
    try {
      const rows = await context.api.audit({
        identity: identity.value.trim(),
        tool: tool.value,
        outcome: outcome.value,
        since: hours ? Date.now() - hours * 3_600_000 : undefined,
      });
      table.update(rows as unknown as AuditRow[]);
      status.textContent = `${rows.length} rows${rows.length >= 200 ? ' (the newest 200)' : ''}`;
    } catch (error) {
      status.textContent = (error as Error).message;
    }
  };
  let typing: ReturnType<typeof setTimeout> | undefined;
  identity.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => void load(), 300);
  });
  for (const select of [tool, outcome, range]) select.addEventListener('change', () => void load());
  return {
    element: h(
      'section',
      { class: 'page audit' },
      h('h1', {}, 'Audit log'),
      h('form', { class: 'filters', role: 'search', onsubmit: (event: Event) => event.preventDefault() }, identity, tool, outcome, range, status),
      h('div', { class: 'table-frame' }, table.element),
    ),
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://index') && !uris.includes('fleet://agents')) return;
      await load();
    },
    destroy() {
      clearTimeout(typing);
    },
  };
}

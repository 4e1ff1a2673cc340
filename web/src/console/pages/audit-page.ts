import { FleetTable } from '../../components/fleet-table.ts';
import { h } from '../../dom.ts';
import { formatTime, formatValue } from '../../format.ts';
import type { Page, PageContext } from '../page.ts';

interface AuditRow {
  seq: number;
  startedAt: number;
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

/** Every call of level 1 or more and every refusal, newest first (level-3 identities only). */
export function auditPage(context: PageContext): Page {
  const table = new FleetTable<AuditRow>({
    columns: [
      { key: 'startedAt', label: 'started', value: (r) => -r.startedAt, text: (r) => formatTime(r.startedAt) },
      { key: 'identity', label: 'identity or source', text: (r) => r.identity || `source ${r.source ?? '?'}` },
      { key: 'tool', label: 'tool' },
      { key: 'targets', label: 'targets', text: (r) => r.targets.join(', ') || '–' },
      { key: 'outcome', label: 'outcome', status: (r) => OUTCOME[r.outcome] },
      { key: 'errorCode', label: 'error', text: (r) => r.errorCode ?? '–' },
      { key: 'arguments', label: 'arguments', text: (r) => formatValue(r.arguments) },
      { key: 'reason', label: 'reason', text: (r) => r.reason ?? '' },
    ],
    rowKey: (r) => String(r.seq),
    empty: 'The audit log is empty.',
  });
  return {
    element: h('section', { class: 'page audit' }, h('h1', {}, 'Audit log'), table.element),
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://index') && !uris.includes('fleet://agents')) return;
      table.update((await context.api.audit()) as unknown as AuditRow[]);
    },
  };
}

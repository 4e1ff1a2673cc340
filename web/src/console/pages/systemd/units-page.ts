import { FleetTable } from '../../../components/fleet-table.ts';
import { h, replace } from '../../../dom.ts';
import { formatTime } from '../../../format.ts';
import { answerProblem } from '../../answer-problem.ts';
import type { DomainPage, Page, PageContext } from '../../page.ts';
import { objectHref } from '../object-page.ts';

interface Unit {
  name: string;
  description: string;
  load_state: string;
  active_state: string;
  sub_state: string;
}

interface JournalLine {
  timestamp: string;
  unit: string | null;
  priority: string | null;
  identifier: string | null;
  text: string;
}

// Inactive is how most units rest (oneshots done, timers' services between runs): no colour, unlike failed.
const ACTIVE: Record<string, string> = { active: 'online', failed: 'critical', activating: 'stale', deactivating: 'stale' };

const NO_SYSTEMD = 'No systemd on this host: nothing to list.';

/** Journal lines read at a time (newest first, as journal_query answers them). */
const JOURNAL_LINES = 100;

/**
 * One host's systemd services (service_list, failed ones first in the state
 * column's order) and its journal newest first (journal_query), filtered by a
 * unit when one is picked from the table.
 */
function unitsPage(context: PageContext, arg: string): Page {
  const host = decodeURIComponent(arg);
  let unit: string | undefined;
  const unitNote = h('div', {});
  const units = new FleetTable<Unit>({
    columns: [
      { key: 'name', label: 'unit' },
      { key: 'active_state', label: 'active', status: (u) => ACTIVE[u.active_state] },
      { key: 'sub_state', label: 'state' },
      { key: 'description', label: 'description' },
    ],
    rowKey: (u) => u.name,
    sortBy: 'active_state',
    onOpen: (u) => {
      unit = u.name;
      void readJournal();
    },
    empty: 'No services.',
  });
  const search = h('input', { type: 'search', class: 'table-search', placeholder: 'search the units', 'aria-label': 'search the units' });
  search.addEventListener('input', () => units.filter(search.value));
  const journalTitle = h('h2', {}, 'Journal, newest first');
  const journal = h('div', {});

  async function readJournal(): Promise<void> {
    journalTitle.textContent = unit ? `Journal of ${unit}, newest first` : 'Journal, newest first';
    const answer = await context.call('journal_query', { host, lines: JOURNAL_LINES, ...(unit ? { unit } : {}) });
    const lines = (answer.structured?.lines ?? []) as JournalLine[];
    replace(
      journal,
      answerProblem(answer, NO_SYSTEMD) ??
        h(
          'ol',
          { class: 'log-lines journal-lines' },
          ...lines.map((line) =>
            h(
              'li',
              {
                class: `log-line ${line.priority === 'err' || line.priority === 'crit' || line.priority === 'alert' || line.priority === 'emerg' ? 'stderr' : 'stdout'}`,
              },
              h('time', { datetime: line.timestamp }, formatTime(Date.parse(line.timestamp))),
              h('span', { class: 'log-source' }, line.unit ?? line.identifier ?? ''),
              h('span', { class: 'log-text' }, line.text),
            ),
          ),
        ),
    );
  }

  return {
    element: h(
      'section',
      { class: 'page units', 'data-host': host },
      h('h1', {}, 'Services of ', h('a', { href: objectHref('host', host) }, host)),
      search,
      unitNote,
      h('div', { class: 'table-frame' }, units.element),
      journalTitle,
      h('div', { class: 'log-viewer' }, journal),
    ),
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://index')) return;
      const answer = await context.call('service_list', { host });
      replace(unitNote, answerProblem(answer, NO_SYSTEMD));
      units.update((answer.structured?.units ?? []) as Unit[]);
      await readJournal();
    },
  };
}

/** A host's services and journal, linked from the host's page. */
export const consolePage: DomainPage = { path: 'units', label: 'Services and journal', rank: 140, of: 'host', open: unitsPage };

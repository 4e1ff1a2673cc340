import { FleetTable } from '../../../components/fleet-table.ts';
import { h, replace } from '../../../dom.ts';
import { formatAgo } from '../../../format.ts';
import { answerProblem } from '../../answer-problem.ts';
import type { DomainPage, Page, PageContext } from '../../page.ts';
import { objectHref } from '../object-page.ts';

interface Installed {
  name: string;
  version: string;
  architecture: string | null;
}

interface Update {
  name: string;
  installed: string;
  candidate: string;
  security: boolean;
  architecture: string | null;
}

const NO_DATABASE = 'No package database on this host.';

/**
 * One host's packages: the updates its own index files offer (package_updates,
 * security ones marked, whether a reboot is needed) and every installed
 * package (package_list), searchable.
 */
function packagesPage(context: PageContext, arg: string): Page {
  const host = decodeURIComponent(arg);
  const summary = h('div', {});
  const updates = new FleetTable<Update>({
    columns: [
      { key: 'name', label: 'package' },
      { key: 'installed', label: 'installed' },
      { key: 'candidate', label: 'available' },
      { key: 'security', label: 'security', text: (u) => (u.security ? 'yes' : ''), status: (u) => (u.security ? 'critical' : undefined) },
    ],
    rowKey: (u) => `${u.name}:${u.architecture ?? ''}`,
    empty: 'No pending updates in the index files this host has.',
  });
  const listNote = h('div', {});
  const installed = new FleetTable<Installed>({
    columns: [
      { key: 'name', label: 'package' },
      { key: 'version', label: 'version' },
      { key: 'architecture', label: 'architecture' },
    ],
    rowKey: (p) => `${p.name}:${p.architecture ?? ''}`,
    empty: 'No packages.',
  });
  const search = h('input', { type: 'search', class: 'table-search', placeholder: 'search the packages', 'aria-label': 'search the packages' });
  search.addEventListener('input', () => installed.filter(search.value));
  return {
    element: h(
      'section',
      { class: 'page packages', 'data-host': host },
      h('h1', {}, 'Packages of ', h('a', { href: objectHref('host', host) }, host)),
      h('h2', {}, 'Pending updates'),
      summary,
      updates.element,
      h('h2', {}, 'Installed'),
      search,
      listNote,
      h('div', { class: 'table-frame' }, installed.element),
    ),
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://index')) return;
      const [updateAnswer, listAnswer] = await Promise.all([context.call('package_updates', { host }), context.call('package_list', { host })]);
      const s = updateAnswer.structured ?? {};
      const age =
        typeof s.metadata_unix_ms === 'number' ? `The index files were refreshed ${formatAgo(s.metadata_unix_ms)}.` : 'The index files were never refreshed.';
      const updateProblem = answerProblem(updateAnswer, NO_DATABASE);
      replace(
        summary,
        updateProblem ??
          h('p', { class: s.reboot_required === true ? 'status-warning' : 'muted' }, s.reboot_required === true ? `A reboot is needed. ${age}` : age),
      );
      // Without an answer there is no list to call empty: the problem says why.
      updates.element.hidden = updateProblem !== null;
      updates.update((s.updates ?? []) as Update[]);
      replace(
        listNote,
        answerProblem(listAnswer, NO_DATABASE) ??
          h('p', { class: 'muted' }, `${String(listAnswer.structured?.installed ?? 0)} installed (${String(listAnswer.structured?.ecosystem ?? '')}).`),
      );
      installed.update((listAnswer.structured?.packages ?? []) as Installed[]);
    },
  };
}

/** A host's packages, linked from the host's page. */
export const consolePage: DomainPage = { path: 'packages', label: 'Packages', rank: 150, of: 'host', open: packagesPage };

import { h, replace } from '../../../dom.ts';
import { ContainerTable, containerRows } from '../../container-table.ts';
import { fleetAnswer } from '../../fleet-answer.ts';
import { type DomainPage, ownPageOf, type Page, type PageContext } from '../../page.ts';

/**
 * Every container of the fleet with its figures, one table over all hosts:
 * sortable, searchable, each name a link to its page. A host whose engine
 * could not be asked stays on the page with its error; hosts without an
 * engine are named once.
 */
function containersPage(context: PageContext): Page {
  const table = new ContainerTable({
    call: context.call,
    containerPage: ownPageOf(context.domainPages, 'container'),
    fleet: true,
    empty: 'No containers in the fleet.',
  });
  const search = h('input', { type: 'search', class: 'table-search', placeholder: 'search the containers', 'aria-label': 'search the containers' });
  search.addEventListener('input', () => table.filter(search.value));
  const failures = h('div', { class: 'host-failures' });
  const absent = h('p', { class: 'muted' });
  return {
    element: h('section', { class: 'page containers' }, h('h1', {}, 'Containers'), search, failures, h('div', { class: 'table-frame' }, table.element), absent),
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://index')) return;
      const [list, stats] = await Promise.all([
        fleetAnswer(context.call, 'docker_list', { all: true }, 'docker'),
        context.may('docker_stats') ? fleetAnswer(context.call, 'docker_stats', {}, 'docker') : Promise.resolve(undefined),
      ]);
      const statsOf = new Map(stats?.nodes.map((node) => [node.host, node]));
      table.update(list.nodes.flatMap((node) => containerRows(node.host, node, statsOf.get(node.host))));
      replace(
        failures,
        list.failed.length
          ? h(
              'ul',
              { class: 'plain failed-hosts' },
              ...list.failed.map((f) => h('li', { class: 'status-critical', 'data-host': f.host }, f.host ? `${f.host}: ${f.message}` : f.message)),
            )
          : null,
      );
      absent.textContent = list.absent.length ? `No Docker engine on ${list.absent.join(', ')}.` : '';
    },
    destroy() {
      table.destroy();
    },
  };
}

/** The fleet's containers, with the docker domain's other pages beside it. */
export const consolePage: DomainPage = { path: 'containers', label: 'Containers', rank: 40, open: containersPage };

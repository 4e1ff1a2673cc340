import { FleetTable } from '../../../components/fleet-table.ts';
import { h, replace } from '../../../dom.ts';
import { formatBytes, formatTime } from '../../../format.ts';
import { answerProblem } from '../../answer-problem.ts';
import type { DomainPage, Page, PageContext } from '../../page.ts';
import { objectHref } from '../object-page.ts';

interface Image {
  id: string;
  tags: string[];
  size_bytes: number;
  created_unix_ms: number;
  containers: number;
  dangling: boolean;
}

interface IndexRow {
  id: string;
  type: string;
  name: string;
  detail?: string;
  stack?: string;
}

const NO_ENGINE = 'No Docker engine on this host.';

/**
 * One host's engine objects beside its containers: its images (image_list,
 * newest first, with their size and how many containers use each), and its
 * volumes and local networks as the broker's index knows them (find), each a
 * link to its own page.
 */
function dockerObjectsPage(context: PageContext, arg: string): Page {
  const host = decodeURIComponent(arg);
  const imageNote = h('div', {});
  const images = new FleetTable<Image>({
    columns: [
      { key: 'tags', label: 'image', text: (i) => i.tags.join(', ') || '<none>' },
      { key: 'id', label: 'id', text: (i) => i.id.replace(/^sha256:/, '').slice(0, 12) },
      { key: 'size_bytes', label: 'size', numeric: true, text: (i) => formatBytes(i.size_bytes) },
      { key: 'containers', label: 'containers', numeric: true },
      { key: 'created_unix_ms', label: 'created', text: (i) => formatTime(i.created_unix_ms) },
    ],
    rowKey: (i) => i.id,
    sortBy: 'created_unix_ms',
    sortDescending: true,
    empty: 'No images.',
  });
  const volumeNote = h('div', {});
  const volumes = new FleetTable<IndexRow>({
    columns: [
      { key: 'name', label: 'volume', cell: (v) => h('a', { href: objectHref(v.type, v.id) }, v.name) },
      { key: 'detail', label: 'driver' },
      { key: 'stack', label: 'stack' },
    ],
    rowKey: (v) => v.name,
    empty: 'No volumes.',
  });
  const networkNote = h('div', {});
  const networks = new FleetTable<IndexRow>({
    columns: [
      { key: 'name', label: 'network', cell: (n) => h('a', { href: objectHref(n.type, n.id) }, n.name) },
      { key: 'detail', label: 'driver' },
      { key: 'stack', label: 'stack' },
    ],
    rowKey: (n) => n.name,
    empty: "No networks of its own (a swarm's are on the swarm page).",
  });
  return {
    element: h(
      'section',
      { class: 'page docker-objects', 'data-host': host },
      h('h1', {}, 'Images, volumes and networks of ', h('a', { href: objectHref('host', host) }, host)),
      h('h2', {}, 'Images'),
      imageNote,
      h('div', { class: 'table-frame' }, images.element),
      h(
        'div',
        { class: 'columns' },
        h('div', {}, h('h2', {}, 'Volumes'), volumeNote, volumes.element),
        h('div', {}, h('h2', {}, 'Networks'), networkNote, networks.element),
      ),
    ),
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://index')) return;
      const [imageAnswer, volumeAnswer, networkAnswer] = await Promise.all([
        context.call('image_list', { host }),
        context.call('find', { type: 'volume', node: host, limit: 200 }),
        context.call('find', { type: 'local_network', node: host, limit: 200 }),
      ]);
      replace(imageNote, answerProblem(imageAnswer, NO_ENGINE));
      images.update((imageAnswer.structured?.images ?? []) as Image[]);
      replace(volumeNote, answerProblem(volumeAnswer, NO_ENGINE));
      volumes.update((volumeAnswer.structured?.rows ?? []) as IndexRow[]);
      replace(networkNote, answerProblem(networkAnswer, NO_ENGINE));
      networks.update((networkAnswer.structured?.rows ?? []) as IndexRow[]);
    },
  };
}

/** A host's images, volumes and networks, linked from the host's page. */
export const consolePage: DomainPage = { path: 'docker', label: 'Images, volumes and networks', rank: 40, of: 'host', open: dockerObjectsPage };

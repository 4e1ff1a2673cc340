import { callOrThrow } from '../../call-tool.ts';
import { FleetTable } from '../../components/fleet-table.ts';
import { h } from '../../dom.ts';
import type { Page, PageContext } from '../page.ts';
import { objectHref } from './object-page.ts';

interface Row {
  id: string;
  name: string;
  type: string;
  state?: string;
  detail?: string;
  host?: string;
  cluster?: string;
  stack?: string;
}

const STATUS: Record<string, string> = {
  running: 'online',
  ready: 'online',
  active: 'online',
  online: 'online',
  exited: 'offline',
  stopped: 'offline',
  down: 'offline',
  failed: 'critical',
  rejected: 'critical',
  paused: 'stale',
  pending: 'stale',
};

/** A page listing one type of the broker's index (sandboxes, PVE guests), each row a link to its page: find answers without a fan-out. */
export function findPage(context: PageContext, title: string, type: string, empty: string): Page {
  const table = new FleetTable<Row>({
    columns: [
      { key: 'name', label: 'name' },
      { key: 'state', label: 'state', status: (r) => STATUS[r.state ?? ''] },
      { key: 'host', label: 'host' },
      { key: 'cluster', label: 'cluster' },
      { key: 'detail', label: 'detail' },
    ],
    rowKey: (r) => r.id,
    // Each row opens its own page (what describe says of it), which links to its host.
    onOpen: (r) => context.navigate(objectHref(r.type, r.id)),
    empty,
  });
  return {
    element: h('section', { class: `page find-${type}` }, h('h1', {}, title), table.element),
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://index')) return;
      table.update((await callOrThrow(context.call, 'find', { type, limit: 200 })).rows as Row[]);
    },
  };
}

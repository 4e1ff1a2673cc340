import { callOrThrow } from '../call-tool.ts';
import { h, replace } from '../dom.ts';
import { formatValue } from '../format.ts';
import type { Widget, WidgetContext } from './widget.ts';

interface Row {
  id: string;
  name: string;
  type: string;
  state?: string;
  detail?: string;
  host?: string;
  stack?: string;
  cluster?: string;
}

/** Where a resource is, in a few words: its host, cluster or stack. */
const whereOf = (row: Row) => [row.host && `on ${row.host}`, row.cluster && `in ${row.cluster}`, row.stack && `stack ${row.stack}`].filter(Boolean).join(' ');

/**
 * find's results grouped by type, with how many of each the index holds, a
 * box that narrows them as you type, and a click (or Enter) on one that asks
 * `describe` for it through the host and shows its digest beneath.
 */
export function findResultsWidget(): Widget {
  const element = h('div', { class: 'widget find-results-widget' });
  return {
    element,
    show(answer, context) {
      if (answer.error) return replace(element, h('p', { class: 'widget-error' }, answer.error.message));
      const structured = answer.structured ?? {};
      const rows = (structured.rows ?? []) as Row[];
      const counts = (structured.counts ?? {}) as Record<string, number>;
      const detail = h('section', { class: 'find-detail', 'aria-live': 'polite' });
      const list = h('div', { class: 'find-groups' });
      const search = h('input', { type: 'search', class: 'table-search', placeholder: `narrow ${rows.length} results`, 'aria-label': 'narrow the results' });
      const render = () => {
        const wanted = search.value.trim().toLowerCase();
        const shown = wanted ? rows.filter((r) => [r.name, r.id, r.state, r.detail, r.host, r.stack].some((v) => v?.toLowerCase().includes(wanted))) : rows;
        const groups = new Map<string, Row[]>();
        for (const row of shown) groups.set(row.type, [...(groups.get(row.type) ?? []), row]);
        replace(
          list,
          groups.size === 0
            ? h('p', { class: 'empty' }, rows.length ? `Nothing matches “${wanted}”.` : 'Nothing found.')
            : [...groups].map(([type, members]) =>
                h(
                  'section',
                  { class: 'find-group', 'data-type': type },
                  h('h3', {}, `${type}s`, h('span', { class: 'count' }, ` ${members.length}${counts[type] !== undefined ? ` of ${counts[type]}` : ''}`)),
                  h('ul', {}, ...members.map((row) => item(row, detail, context))),
                ),
              ),
        );
      };
      search.addEventListener('input', render);
      render();
      const total = Number(structured.total ?? rows.length);
      replace(element, h('p', { class: 'find-total' }, `${rows.length} shown of ${total} found`), search, list, detail);
    },
  };
}

function item(row: Row, detail: HTMLElement, context: WidgetContext): HTMLLIElement {
  const open = async () => {
    replace(detail, h('p', {}, `describing ${row.type} ${row.name}…`));
    try {
      const digest = await callOrThrow(context.call, 'describe', { type: row.type, id: row.id });
      replace(
        detail,
        h('h3', {}, `${row.type} ${row.name}`),
        h(
          'dl',
          {},
          ...Object.entries(digest)
            .filter(([key]) => key !== 'raw')
            .flatMap(([key, value]) => [h('dt', {}, key), h('dd', {}, formatValue(value))]),
        ),
      );
    } catch (error) {
      replace(detail, h('p', { class: 'widget-error' }, (error as Error).message));
    }
  };
  return h(
    'li',
    { class: 'find-row', 'data-id': row.id, 'data-name': row.name },
    h(
      'button',
      { type: 'button', class: 'link', onclick: () => void open() },
      h('strong', {}, row.name),
      row.state ? h('span', { class: `state state-${row.state}` }, ` ${row.state}`) : null,
      row.detail ? h('span', { class: 'detail' }, ` · ${row.detail}`) : null,
      whereOf(row) ? h('span', { class: 'where' }, ` · ${whereOf(row)}`) : null,
    ),
  );
}

import { callOrThrow } from '../../call-tool.ts';
import { h, replace } from '../../dom.ts';
import { formatAgo, formatTime, formatValue } from '../../format.ts';
import { domainPageHref, ownPageOf, type Page, type PageContext } from '../page.ts';

interface Digest {
  id: string;
  name: string;
  type: string;
  state: string;
  reason?: string;
  since_unix_ms: number | null;
  details: Record<string, unknown>;
  related: { type: string; id: string; name: string; relation?: string; host?: string }[];
  recent_failures: { task: string; node: string; state: string; error: string; exit_code: number | null; timestamp_unix_ms: number }[];
  restarts?: { last_hour: number; last_week: number };
  host?: string;
  cluster?: string;
}

/** The console's address of any indexed object: hosts have their own page, everything else this one. */
export function objectHref(type: string, id: string): string {
  return type === 'host' ? `#/host/${encodeURIComponent(id)}` : `#/object/${encodeURIComponent(type)}/${encodeURIComponent(id)}`;
}

/**
 * One object of the broker's index, of any type a domain declares, as
 * `describe` gives it: its state and why, since when, its details, recent
 * failures and restarts, and what it relates to, each a link to its own page.
 */
export function objectPage(context: PageContext, type: string, id: string): Page {
  const element = h('section', { class: 'page object', 'data-type': type }, h('h1', {}, `${type} ${id}`), h('p', { class: 'loading' }, 'Loading…'));
  return {
    element,
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://index')) return;
      const digest = (await callOrThrow(context.call, 'describe', { type, id })) as unknown as Digest;
      // A domain's own page of this type (a container's configuration and logs), for an object on a host.
      const own = ownPageOf(context.domainPages, digest.type);
      replace(
        element,
        h('h1', {}, `${digest.type} `, h('span', { class: 'object-name' }, digest.name)),
        h(
          'p',
          { class: 'object-state' },
          h('span', { class: `status status-${digest.state}`, 'data-state': digest.state }, digest.state),
          digest.since_unix_ms ? ` since ${formatTime(digest.since_unix_ms)} (${formatAgo(digest.since_unix_ms)})` : '',
          digest.reason ? ` — ${digest.reason}` : '',
          digest.host ? h('span', {}, ' · on ', h('a', { href: objectHref('host', digest.host) }, digest.host)) : null,
          digest.cluster ? ` · in ${digest.cluster}` : '',
        ),
        own && digest.host
          ? h('p', {}, h('a', { href: domainPageHref(own, digest.host, digest.name), class: 'own-page' }, `Its ${own.label.toLowerCase()} page`))
          : null,
        digest.restarts ? h('p', {}, `Restarts: ${digest.restarts.last_hour} in the last hour, ${digest.restarts.last_week} in the last week.`) : null,
        h('dl', { class: 'object-details' }, ...Object.entries(digest.details).flatMap(([key, value]) => [h('dt', {}, key), h('dd', {}, formatValue(value))])),
        digest.recent_failures.length
          ? h(
              'section',
              {},
              h('h2', {}, 'Recent failures'),
              h(
                'ul',
                { class: 'failures' },
                ...digest.recent_failures.map((f) =>
                  h(
                    'li',
                    {},
                    `${formatTime(f.timestamp_unix_ms)} · ${f.task} on ${f.node}: ${f.state}`,
                    f.exit_code !== null ? `, exit code ${f.exit_code}` : '',
                    f.error ? ` — ${f.error}` : '',
                  ),
                ),
              ),
            )
          : null,
        digest.related.length
          ? h(
              'section',
              {},
              h('h2', {}, 'Related'),
              h(
                'ul',
                { class: 'related' },
                ...digest.related.map((r) =>
                  h(
                    'li',
                    {},
                    r.relation ? `${r.relation} ` : '',
                    `${r.type} `,
                    h('a', { href: objectHref(r.type, r.id) }, r.name),
                    r.host ? ` on ${r.host}` : '',
                  ),
                ),
              ),
            )
          : null,
      );
    },
  };
}

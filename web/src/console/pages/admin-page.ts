import { h, replace } from '../../dom.ts';
import { formatAgo, formatTime } from '../../format.ts';
import { confirmDialog } from '../confirm-dialog.ts';
import type { Page, PageContext } from '../page.ts';
import { thresholdsSection } from './thresholds-section.ts';

interface TokenRow {
  token_id: string;
  status: string;
  uses: number;
  uses_allowed: number | null;
  expires_at_unix_ms: number;
  labels: Record<string, string>;
  roles: string[];
}

interface IdentityRow {
  id: string;
  name: string;
  kind: string;
  level: number;
  grants: string[];
  expires_at_unix_ms: number;
  last_used_at_unix_ms: number | null;
}

/** `k=v,k2=v2` as labels; a part without `=` is refused by saying so. */
function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`"${part}" is not a label: write key=value`);
    labels[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return labels;
}

function table(headers: string[], rows: HTMLElement[], empty: string): HTMLElement {
  return h(
    'div',
    { class: 'table-frame' },
    h(
      'table',
      { class: 'fleet-table' },
      h('thead', {}, h('tr', {}, ...headers.map((header) => h('th', { scope: 'col' }, header)))),
      h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { class: 'empty', colspan: headers.length }, empty))),
    ),
  );
}

function field(label: string, input: HTMLElement): HTMLElement {
  return h('label', { class: 'admin-field' }, h('span', {}, label), input);
}

/**
 * The broker's own records, for level-3 identities: join tokens and MCP
 * client identities, listed, created (the secret shown once, here only) and
 * revoked after a confirmation that names the record. Each change goes
 * through the broker's admin API, which calls what `fleetmesh token …` and
 * `fleetmesh identity …` call and writes the same audit rows; and, where this
 * identity may use their tools, the hosts' alert thresholds and a test of the
 * broker's notification channels.
 */
export function adminPage(context: PageContext): Page {
  const status = h('p', { class: 'admin-status', role: 'status', 'aria-live': 'polite' });
  const secret = h('div', { class: 'admin-secret' });
  const tokens = h('div', {});
  const identities = h('div', {});
  const say = (text: string, kind: 'ok' | 'error') => {
    status.className = `admin-status ${kind}`;
    status.textContent = text;
  };
  /** Runs one change; a refusal is said, not thrown. */
  const change = async (what: string, work: () => Promise<void>) => {
    try {
      await work();
      await page.refresh([]);
    } catch (error) {
      say(`${what}: ${(error as Error).message}`, 'error');
    }
  };
  const showSecret = (title: string, lines: [string, string][]) =>
    replace(
      secret,
      h('h3', {}, title),
      h('p', {}, 'Shown only this once: the broker keeps only its hash.'),
      h('dl', { class: 'object-details' }, ...lines.flatMap(([name, value]) => [h('dt', {}, name), h('dd', {}, h('code', { 'data-secret': name }, value))])),
    );

  const ttlHours = h('input', { type: 'number', name: 'ttl_hours', min: 1, value: 1, 'aria-label': 'valid for, hours' });
  const uses = h('input', { type: 'number', name: 'uses', min: 1, value: 1, 'aria-label': 'uses' });
  const reusable = h('input', { type: 'checkbox', name: 'reusable', 'aria-label': 'reusable' });
  const labels = h('input', { type: 'text', name: 'labels', placeholder: 'role=web,env=prod', 'aria-label': 'labels' });
  const tokenForm = h(
    'form',
    { class: 'admin-form', 'data-form': 'token' },
    field('valid for (hours)', ttlHours),
    field('uses', uses),
    field('reusable', reusable),
    field('labels', labels),
    h('button', { type: 'submit' }, 'Create join token'),
  );
  tokenForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void change('token create', async () => {
      const created = await context.api.admin('tokens', {
        create: {
          ttl_hours: Number(ttlHours.value),
          ...(reusable.checked ? { reusable: true } : { uses: Number(uses.value) }),
          labels: parseLabels(labels.value),
        },
      });
      showSecret(`Join token ${String(created.token_id)}`, [
        ['token', String(created.token)],
        ['CA pin', String(created.ca_pin)],
        ['agent command', String(created.agent_command)],
      ]);
      say(`token create: join token ${String(created.token_id)} created.`, 'ok');
    });
  });

  const name = h('input', { type: 'text', name: 'name', required: true, placeholder: 'ci', 'aria-label': 'identity name' });
  const level = h(
    'select',
    { name: 'level', 'aria-label': 'level' },
    ...['0 read-only', '1 operational', '2 configuration', '3 impactful'].map((text, n) => h('option', { value: n }, text)),
  );
  const grants = h('input', { type: 'text', name: 'grants', placeholder: 'host:web-* container:web-1/*=write (default: everything)', 'aria-label': 'grants' });
  const identityForm = h(
    'form',
    { class: 'admin-form', 'data-form': 'identity' },
    field('name', name),
    field('level', level),
    field('grants', grants),
    h('button', { type: 'submit' }, 'Create identity'),
  );
  identityForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void change('identity create', async () => {
      const created = await context.api.admin('identities', {
        create: { name: name.value, level: Number(level.value), grants: grants.value.split(/\s+/).filter((g) => g !== '') },
      });
      showSecret(`Identity ${String(created.name)}`, [['bearer token', String(created.token)]]);
      say(`identity create: ${String(created.name)} created at level ${String(created.level)}.`, 'ok');
      name.value = '';
    });
  });

  const revoke = async (kind: 'tokens' | 'identities', id: string, label: string) => {
    const what = kind === 'tokens' ? 'token revoke' : 'identity revoke';
    const consequence = kind === 'tokens' ? 'No further agent can enroll with it; agents it enrolled stay.' : 'Its token stops working at its next request.';
    if (!(await confirmDialog(what, consequence, [{ host: 'broker', resource: label }]))) return;
    await change(what, async () => {
      await context.api.admin(kind, { revoke: id });
      say(`${what}: ${label} revoked.`, 'ok');
    });
  };

  const thresholds = context.may('set_alert_thresholds') ? thresholdsSection(context, say) : undefined;

  const notifications = context.may('notify_test')
    ? h(
        'div',
        {},
        h('h2', {}, 'Notification channels'),
        h('p', { class: 'muted' }, 'The channels are the broker’s --notify-* flags; this sends each a test message and says how it answered.'),
        h(
          'button',
          {
            type: 'button',
            'data-tool': 'notify_test',
            onclick: () =>
              void context.act('notify_test', {}).then((answer) => {
                const channels = (answer?.structured?.channels ?? []) as { channel: string; origin: string; ok: boolean; error?: string }[];
                if (answer?.error) say(`notify_test: ${answer.error.message}${answer.error.hint ? ` — ${answer.error.hint}` : ''}`, 'error');
                else if (answer)
                  say(
                    channels.length
                      ? channels.map((c) => `${c.channel} ${c.origin}: ${c.ok ? 'sent' : (c.error ?? 'failed')}`).join(' · ')
                      : 'No notification channel is configured.',
                    channels.every((c) => c.ok) ? 'ok' : 'error',
                  );
              }),
          },
          'Send a test notification',
        ),
      )
    : undefined;

  const page: Page = {
    element: h(
      'section',
      { class: 'page admin' },
      h('h1', {}, 'Admin'),
      status,
      secret,
      h('h2', {}, 'Join tokens'),
      tokenForm,
      tokens,
      h('h2', {}, 'Identities'),
      identityForm,
      identities,
      thresholds?.element,
      notifications,
    ),
    async refresh(uris) {
      // None of this is a fleet resource: it is read when the page opens and after each change here, not at each heartbeat.
      if (uris.length > 0) return;
      const [tokenRows, identityRows] = await Promise.all([
        context.api.admin('tokens').then((body) => body.rows as TokenRow[]),
        context.api.admin('identities').then((body) => body.rows as IdentityRow[]),
        thresholds?.refresh(),
      ]);
      replace(
        tokens,
        table(
          ['token id', 'status', 'uses', 'expires', 'labels', ''],
          [...tokenRows].reverse().map((t) =>
            h(
              'tr',
              { 'data-key': t.token_id, 'data-status': t.status },
              h('td', {}, t.token_id),
              h('td', {}, t.status),
              h('td', { class: 'num' }, `${t.uses}/${t.uses_allowed ?? '∞'}`),
              h('td', {}, formatTime(t.expires_at_unix_ms)),
              h(
                'td',
                {},
                Object.entries(t.labels)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(', ') || '–',
              ),
              h(
                'td',
                {},
                t.status === 'usable' || t.status === 'used up'
                  ? h(
                      'button',
                      {
                        type: 'button',
                        class: 'danger',
                        'data-revoke': t.token_id,
                        onclick: () => void revoke('tokens', t.token_id, `join-token:${t.token_id}`),
                      },
                      'Revoke',
                    )
                  : '',
              ),
            ),
          ),
          'No join tokens.',
        ),
      );
      replace(
        identities,
        table(
          ['name', 'kind', 'level', 'grants', 'expires', 'last used', ''],
          identityRows.map((i) =>
            h(
              'tr',
              { 'data-key': i.name },
              h('td', {}, i.name),
              h('td', {}, i.kind),
              h('td', { class: 'num' }, i.level),
              h('td', {}, i.grants.join(' ')),
              h('td', {}, formatTime(i.expires_at_unix_ms)),
              h('td', {}, i.last_used_at_unix_ms ? formatAgo(i.last_used_at_unix_ms) : 'never'),
              h(
                'td',
                {},
                i.name === context.me.identity
                  ? h('span', { class: 'muted' }, 'you')
                  : h(
                      'button',
                      { type: 'button', class: 'danger', 'data-revoke': i.name, onclick: () => void revoke('identities', i.id, `identity:${i.name}`) },
                      'Revoke',
                    ),
              ),
            ),
          ),
          'No identities.',
        ),
      );
    },
  };
  return page;
}

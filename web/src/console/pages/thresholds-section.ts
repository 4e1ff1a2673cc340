import { h, replace } from '../../dom.ts';
import type { PageContext } from '../page.ts';

interface HostAlerts {
  host: string;
  availability: string;
  alerts?: { metric: 'cpu' | 'memory' | 'disk'; threshold_percent: number }[];
}

const METRICS = ['cpu', 'memory', 'disk'] as const;

/**
 * Each host's alert thresholds as its `alerts` answer gives them, and a form
 * that changes them on one host or every host through set_alert_thresholds:
 * the same action, levels, grants and audit as an MCP client's call.
 */
export function thresholdsSection(context: PageContext, say: (text: string, kind: 'ok' | 'error') => void): { element: HTMLElement; refresh(): Promise<void> } {
  const rows = h('div', {});
  const target = h('select', { name: 'host', 'aria-label': 'host' });
  const inputs = Object.fromEntries(
    METRICS.map((metric) => [
      metric,
      h('input', { type: 'number', name: metric, min: 1, max: 100, placeholder: 'as is', 'aria-label': `${metric} threshold, percent` }),
    ]),
  ) as Record<(typeof METRICS)[number], HTMLInputElement>;
  let hosts: string[] = [];
  const form = h(
    'form',
    { class: 'admin-form', 'data-form': 'thresholds' },
    h('label', { class: 'admin-field' }, h('span', {}, 'host'), target),
    ...METRICS.map((metric) => h('label', { class: 'admin-field' }, h('span', {}, `${metric} %`), inputs[metric])),
    h('button', { type: 'submit' }, 'Set thresholds'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const wanted = Object.fromEntries(METRICS.filter((m) => inputs[m].value !== '').map((m) => [`${m}_threshold`, Number(inputs[m].value)]));
    const where = target.value === '' ? { hosts } : { host: target.value };
    void context.act('set_alert_thresholds', { ...where, ...wanted }).then(async (answer) => {
      if (!answer) return;
      if (answer.error) say(`set_alert_thresholds: ${answer.error.message}`, 'error');
      else say(`set_alert_thresholds: ${target.value || 'every host'} set.`, answer.is_error ? 'error' : 'ok');
      for (const metric of METRICS) inputs[metric].value = '';
      await refresh();
    });
  });

  async function refresh(): Promise<void> {
    const answer = await context.call('alerts', {});
    const nodes = answer.error ? [] : ((answer.structured?.hosts ?? []) as HostAlerts[]);
    hosts = nodes.filter((n) => n.availability !== 'unavailable').map((n) => n.host);
    const chosen = target.value;
    replace(target, h('option', { value: '' }, 'every host'), ...hosts.map((name) => h('option', { value: name }, name)));
    target.value = hosts.includes(chosen) ? chosen : '';
    const threshold = (node: HostAlerts, metric: string) => {
      const found = node.alerts?.find((a) => a.metric === metric);
      return found ? `${found.threshold_percent} %` : '–';
    };
    replace(
      rows,
      answer.error
        ? h('p', { class: 'status-warning' }, answer.error.message)
        : h(
            'div',
            { class: 'table-frame' },
            h(
              'table',
              { class: 'fleet-table' },
              h('thead', {}, h('tr', {}, ...['host', ...METRICS].map((label) => h('th', { scope: 'col' }, label)))),
              h(
                'tbody',
                {},
                ...nodes.map((node) =>
                  h(
                    'tr',
                    { 'data-key': node.host },
                    h('td', {}, node.host),
                    ...METRICS.map((metric) => h('td', { class: 'num', 'data-metric': metric }, threshold(node, metric))),
                  ),
                ),
              ),
            ),
          ),
    );
  }

  return {
    element: h(
      'div',
      {},
      h('h2', {}, 'Alert thresholds'),
      h('p', { class: 'muted' }, 'Where each host calls CPU, memory and a disk critical; its agent keeps what is set here over its --alert-* flags.'),
      form,
      rows,
    ),
    refresh,
  };
}

import '../components/components.css';
import './console.css';
import { h, replace } from '../dom.ts';
import { confirmDialog } from './confirm-dialog.ts';
import { ConsoleApi, type Me, SignedOut } from './console-api.ts';
import type { DomainPage, Page, PageContext } from './page.ts';
import { adminPage } from './pages/admin-page.ts';
import { approvalsPage } from './pages/approvals-page.ts';
import { auditPage } from './pages/audit-page.ts';
import { chartsPage } from './pages/charts-page.ts';
import { hostPage } from './pages/host-page.ts';
import { objectHref, objectPage } from './pages/object-page.ts';
import { overviewPage } from './pages/overview-page.ts';
import { recommendationsPage } from './pages/recommendations-page.ts';
import { SearchBox } from './search-box.ts';

/** Each domain's page, from its folder of pages/ (vite gathers them when it builds). */
const DOMAIN_PAGES = Object.values(import.meta.glob<DomainPage>('./pages/*/*-page.ts', { eager: true, import: 'consolePage' })).sort((a, b) => a.rank - b.rank);

const api = new ConsoleApi();
const root = document.getElementById('app') as HTMLElement;

function signInForm(message?: string): void {
  const token = h('input', { type: 'password', name: 'token', autocomplete: 'off', placeholder: 'fmc1.…', required: true, 'aria-label': 'identity token' });
  const error = h('p', { class: 'error', role: 'alert' }, message ?? '');
  const form = h(
    'form',
    { class: 'sign-in' },
    h('h1', {}, 'fleetmesh'),
    h(
      'p',
      {},
      'Sign in with an identity token: the admin token ',
      h('code', {}, 'npm start'),
      ' printed, or one from ',
      h('code', {}, 'fleetmesh identity create'),
      '.',
    ),
    token,
    h('button', { type: 'submit' }, 'Sign in'),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    api.signIn(token.value).then(
      (me) => start(me),
      (failure: Error) => {
        error.textContent = failure.message;
        token.value = '';
      },
    );
  });
  replace(root, form);
  token.focus();
}

function start(me: Me): void {
  const notice = h('div', { class: 'notice', role: 'status' });
  const main = h('main', {});
  const allowed = new Set(me.tools.map((t) => t.tool));
  let page: Page | undefined;
  let refreshing = false;

  const show = (text: string, kind: 'ok' | 'error') => {
    notice.className = `notice ${kind}`;
    notice.textContent = text;
  };

  const context: PageContext = {
    api,
    call: api.call,
    me,
    navigate: (hash) => {
      location.hash = hash;
    },
    may: (tool) => allowed.has(tool),
    domainPages: DOMAIN_PAGES,
    async act(tool, args, onStep = () => {}) {
      let answer = await api.act(tool, args, onStep);
      if (answer.error?.code === 'confirm_required') {
        if (!(await confirmDialog(tool, answer.error.message, answer.targets ?? []))) {
          show(`${tool}: cancelled, nothing was changed.`, 'ok');
          return undefined;
        }
        answer = await api.act(tool, { ...args, confirm: true }, onStep);
      }
      if (answer.error) show(`${tool}: ${answer.error.message}${answer.error.code === 'unavailable' ? ` — ${answer.error.hint}` : ''}`, 'error');
      else show(`${tool}: done${answer.is_error ? ' with errors' : ''}.`, answer.is_error ? 'error' : 'ok');
      // Whatever it changed shows at once, not only when the broker's change notice comes.
      void refresh(['fleet://index']);
      return answer;
    },
  };

  const links: [string, string][] = [
    ['#/', 'Fleet'],
    ['#/charts', 'Charts'],
    ...DOMAIN_PAGES.filter((domainPage) => (domainPage.of ?? 'fleet') === 'fleet').map((domainPage): [string, string] => [
      `#/${domainPage.path}`,
      domainPage.label,
    ]),
    ['#/recommendations', 'Recommendations'],
    ...(me.approvals ? ([['#/approvals', 'Approvals']] as [string, string][]) : []),
    ...(me.audit ? ([['#/audit', 'Audit']] as [string, string][]) : []),
    ...(me.admin ? ([['#/admin', 'Admin']] as [string, string][]) : []),
  ];
  const nav = h(
    'nav',
    {},
    h('a', { href: '#/', class: 'brand' }, 'fleetmesh'),
    ...links.map(([href, label]) => h('a', { href }, label)),
    new SearchBox(api.call, (found) => context.navigate(objectHref(found.type, found.type === 'host' ? found.name : found.id))).element,
    // Who is signed in and the way out stay together when the bar wraps.
    h(
      'span',
      { class: 'who' },
      `${me.identity} · level ${me.effective_level} `,
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          onclick: () =>
            void api.signOut().then(
              () => location.reload(),
              (error: Error) => show(`Sign out: ${error.message}`, 'error'),
            ),
        },
        'Sign out',
      ),
    ),
  );

  const route = () => {
    page?.destroy?.();
    const [, name = '', arg = ''] = /^#\/([^/]*)\/?(.*)$/.exec(location.hash) ?? [];
    const domainPage = DOMAIN_PAGES.find((candidate) => candidate.path === name);
    const [objectType = '', objectId = ''] = name === 'object' ? arg.split('/').map(decodeURIComponent) : [];
    page =
      name === 'host' && arg
        ? hostPage(context, decodeURIComponent(arg))
        : objectType && objectId
          ? objectPage(context, objectType, objectId)
          : domainPage && (arg || (domainPage.of ?? 'fleet') === 'fleet')
            ? domainPage.open(context, arg)
            : name === 'charts'
              ? chartsPage(context)
              : name === 'recommendations'
                ? recommendationsPage(context)
                : name === 'audit' && me.audit
                  ? auditPage(context)
                  : name === 'approvals' && me.approvals
                    ? approvalsPage(context)
                    : name === 'admin' && me.admin
                      ? adminPage(context)
                      : overviewPage(context);
    for (const link of nav.querySelectorAll('a')) link.classList.toggle('current', link.getAttribute('href') === (location.hash || '#/'));
    replace(main, page.element);
    void refresh([]);
  };

  /**
   * One refresh at a time; what changes meanwhile is gathered for the next. An
   * empty list means a full load (a page just opened).
   */
  let queued: { full: boolean; uris: Set<string> } | undefined;
  const refresh = async (uris: string[]) => {
    if (refreshing) {
      queued ??= { full: false, uris: new Set() };
      if (uris.length === 0) queued.full = true;
      for (const uri of uris) queued.uris.add(uri);
      return;
    }
    refreshing = true;
    let batch = uris;
    try {
      while (true) {
        await page?.refresh(batch).catch((error: Error) => {
          if (error instanceof SignedOut) signInForm('The session ended: sign in again.');
          else show(error.message, 'error');
        });
        const next = queued;
        queued = undefined;
        if (!next) break;
        batch = next.full ? [] : [...next.uris];
      }
    } finally {
      refreshing = false;
    }
  };

  replace(root, h('header', {}, nav), notice, main);
  window.addEventListener('hashchange', route);
  api.changes((uris) => void refresh(uris));
  route();
}

api.session().then(
  (me) => (me ? start(me) : signInForm()),
  (error: Error) => signInForm(error.message),
);

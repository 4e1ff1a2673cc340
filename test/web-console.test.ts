/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Functions passed to page.evaluate run in the browser.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Docker from 'dockerode';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { identityToken } from './harness/mcp-client.ts';
import { createService, removeSwarmObjects } from './harness/swarm-services.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';
import { buildWebAssets } from './harness/web-assets.ts';

const SERVICES = ['wc-web', 'wc-api'];
const CONTAINERS = ['wc-ticker', 'wc-victim'];

describe('the web console in Chromium', () => {
  let assets: { dir: string; remove(): void };
  let fleet: TestFleet;
  let docker: Docker;
  let doomed: Agent;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let adminToken: string;
  let consoleUrl: string;

  beforeAll(async () => {
    docker = testDocker();
    await removeSwarmObjects(docker, { services: SERVICES });
    await removeContainers(docker, CONTAINERS);
    assets = await buildWebAssets();
    for (const name of SERVICES) {
      await createService(docker, { name, replicas: name === 'wc-web' ? 2 : 1, command: ['sh', '-c', `while true; do echo "${name} alive"; sleep 1; done`] });
    }
    await runContainer(docker, {
      name: 'wc-ticker',
      command: ['sh', '-c', 'i=0; while true; do echo "tick $i"; echo "tock $i" >&2; i=$((i+1)); sleep 0.3; done'],
    });
    // Stops at SIGTERM, so docker_stop is quick.
    await runContainer(docker, { name: 'wc-victim', command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'] });
    fleet = await startTestFleet({ operationsLevel: 3, webListen: '127.0.0.1:0', webAssetsDir: assets.dir });
    await fleet.addAgent('wc-manager', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      domainFlags: { 'swarm-name': 'web-swarm' },
      token: await fleet.token({ roles: ['swarm-manager'], labels: { env: 'test', role: 'manager' } }),
    });
    doomed = await fleet.addAgent('wc-doomed');
    adminToken = await identityToken(fleet.broker, 3, undefined, 'console-admin');
    consoleUrl = fleet.broker.web?.url ?? '';
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    problems = watchProblems(page);
  });

  afterAll(async () => {
    await browser?.close();
    await fleet?.stop();
    assets?.remove();
    if (docker) {
      await removeSwarmObjects(docker, { services: SERVICES });
      await removeContainers(docker, CONTAINERS);
    }
  });

  it('refuses a wrong token, then signs in with a right one into an HttpOnly, SameSite=Strict cookie', async () => {
    await page.goto(consoleUrl);
    await page.fill('input[name=token]', 'fmc1.nope.nope');
    await page.click('button[type=submit]');
    await page.waitForSelector('.sign-in .error:has-text("sign-in refused")');
    await screenshot(page, 'console-sign-in-refused');

    await page.fill('input[name=token]', adminToken);
    await page.click('button[type=submit]');
    await page.waitForSelector('nav .who:has-text("console-admin")');
    const cookies = await context.cookies();
    expect(cookies).toEqual([expect.objectContaining({ name: `fleetmesh_session_${new URL(consoleUrl).port}`, httpOnly: true, sameSite: 'Strict' })]);
    expect(cookies[0]?.value).not.toContain(adminToken);
    expect(page.url()).not.toContain(adminToken);
    // The page's half of the session, the CSRF token, is all it keeps; the identity token is kept nowhere.
    expect(await page.evaluate(() => [Object.keys(localStorage), sessionStorage.length, document.cookie])).toEqual([['fleetmesh.csrf'], 0, '']);
    expect(await page.evaluate(() => localStorage.getItem('fleetmesh.csrf'))).not.toContain(adminToken);
  });

  it('hands a listener on another port of the host the cookie, which is of no use to it, and stays signed in after a reload', async () => {
    const handed: string[] = [];
    const foreign = createServer((req, res) => {
      handed.push(req.headers.cookie ?? '');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>elsewhere</title>');
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    const other = await context.newPage();
    try {
      const foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`;
      await other.goto(foreignUrl);
      // The browser sent it the console's cookie (cookies know no ports), but not the page's storage.
      const cookie = handed[0] ?? '';
      expect(cookie).toMatch(/^fleetmesh_session_\d+=/);
      expect(await other.evaluate(() => localStorage.length)).toBe(0);
      for (const origin of [undefined, consoleUrl.replace(/\/$/, ''), foreignUrl.replace(/\/$/, '')]) {
        const headers = { cookie, ...(origin ? { origin } : {}) };
        const me = await fetch(`${consoleUrl}api/session`, { headers });
        expect([401, 403]).toContain(me.status);
        const restart = await fetch(`${consoleUrl}api/call`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ tool: 'docker_restart', args: { host: 'wc-manager', name: 'wc-ticker' } }),
        });
        expect(restart.status).toBe(403);
      }
    } finally {
      await other.close();
      await new Promise((resolve) => foreign.close(resolve));
    }
    await page.reload();
    await page.waitForSelector('nav .who:has-text("console-admin")');
  });

  it('shows a host go from online to offline when its agent stops, without a reload', async () => {
    await page.goto(`${consoleUrl}#/`);
    await page.waitForSelector('tr[data-key="wc-doomed"] td[data-status="online"]');
    await page.waitForSelector('tr[data-key="wc-manager"] td[data-status="online"]');
    // Each host's name links to its page, beside its labels and its last hour's CPU as a sparkline.
    const manager = page.locator('tr[data-key="wc-manager"]');
    expect(await manager.locator('a').getAttribute('href')).toBe('#/host/wc-manager');
    expect(await manager.textContent()).toContain('env=test, role=manager');
    await page.waitForSelector('tr[data-key="wc-manager"] .sparkline-cell svg[data-points]', { timeout: 30_000 });
    await screenshot(page, 'console-overview');
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    await fleet.stopAgent(doomed);
    await page.waitForSelector('tr[data-key="wc-doomed"] td[data-status="offline"]');
    expect(navigations).toEqual([]);
    await page.waitForSelector('.tile[data-state="offline"] .tile-count:has-text("1")');
  });

  it('opens a host page with vital signs and a chart that has data points', async () => {
    await page.click('tr[data-key="wc-manager"]');
    await page.waitForSelector('.page.host[data-host="wc-manager"] [data-vital="cpu"]');
    await page.waitForFunction(() => Number(document.querySelector('.metrics-chart')?.getAttribute('data-points')) > 0, undefined, { timeout: 30_000 });
    await page.waitForSelector('.metrics-chart canvas');
    await page.waitForSelector('tr[data-key="wc-ticker"]');
    await screenshot(page, 'console-host');
  });

  it("follows a container's new log lines, stdout and stderr told apart", async () => {
    await page.click('tr[data-key="wc-ticker"]');
    await page.waitForSelector('.log-line.stdout:has-text("tick")');
    await page.waitForSelector('.log-line.stderr:has-text("tock")');
    const newest = async () =>
      page.evaluate(() =>
        Math.max(...[...document.querySelectorAll('.log-line.stdout .log-text')].map((e) => Number(/tick (\d+)/.exec(e.textContent ?? '')?.[1] ?? -1))),
      );
    const first = await newest();
    await page.waitForFunction(
      (seen) => [...document.querySelectorAll('.log-line.stdout .log-text')].some((e) => Number(/tick (\d+)/.exec(e.textContent ?? '')?.[1]) > seen + 3),
      first,
      {
        timeout: 30_000,
      },
    );
    await page.fill('.log-search', 'tock');
    expect(await page.locator('.log-line.stdout').count()).toBe(0);
    await screenshot(page, 'console-logs');
  });

  it("draws the swarm topology with the test swarm's services", async () => {
    await page.goto(`${consoleUrl}#/swarm`);
    await waitFor(
      async () => {
        await page.click('.chip:has-text("placement")').catch(() => undefined);
        return (await page.locator('.swarm-topology g[data-type="service"][data-name="wc-web"]').count()) > 0;
      },
      { timeoutMs: 60_000, intervalMs: 1000, what: 'wc-web in the topology' },
    );
    await page.waitForSelector('.swarm-topology g[data-type="service"][data-name="wc-api"]');
    await page.waitForSelector('.swarm-topology g[data-type="node"]');
    // An edge between two boxes at the same height is a flat line, which Playwright never calls visible.
    await page.waitForSelector('.swarm-topology path.edge', { state: 'attached' });
    await screenshot(page, 'console-swarm');
  });

  it('searches the fleet from any page with the keyboard: / to focus, results by type, arrows and Enter open the object', async () => {
    await page.goto(`${consoleUrl}#/recommendations`);
    await page.waitForSelector('.page');
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('search the fleet');
    await page.keyboard.type('wc-');
    await page.waitForSelector('.search-group[aria-label="containers"] .search-option[data-name="wc-victim"]');
    await page.waitForSelector('.search-group[aria-label="hosts"] .search-option[data-name="wc-manager"]');
    await screenshot(page, 'console-search');
    // Down until the container is the active option, then Enter.
    for (let i = 0; i < 20; i++) {
      if ((await page.getAttribute('.search-option.active', 'data-name')) === 'wc-victim') break;
      await page.keyboard.press('ArrowDown');
    }
    expect(await page.getAttribute('.search-option.active', 'data-name')).toBe('wc-victim');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.page.object[data-type="container"] .object-name:has-text("wc-victim")');
    expect(page.url()).toContain('#/object/container/');
    expect(await page.textContent('.page.object')).toMatch(/running|exited/);
    // Its host is a link to the host's page.
    await page.click('.page.object .object-state a');
    await page.waitForSelector('.page.host');
    expect(page.url()).toContain('#/host/wc-manager');
  });

  it('asks to confirm a destructive action, then shows it in the audit log', async () => {
    await page.goto(`${consoleUrl}#/host/wc-manager`);
    // A running container shows its figures, and offers what its state allows: restart and stop, not start.
    const victimRow = page.locator('tr[data-key="wc-victim"]');
    await victimRow.waitFor();
    await page.waitForFunction(() => /\d+\.\d %/.test(document.querySelector('tr[data-key="wc-victim"]')?.textContent ?? ''));
    expect(await victimRow.textContent()).toMatch(/of \d/);
    await page.click('tr[data-key="wc-victim"]');
    await page.waitForSelector('button[data-tool="docker_restart"]');
    expect(await page.locator('button[data-tool="docker_start"]').count()).toBe(0);
    await page.click('button[data-tool="docker_stop"]');
    const dialog = page.locator('dialog.confirm-dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('wc-victim');
    await screenshot(page, 'console-confirm');
    await page.click('dialog.confirm-dialog button[data-action="confirm"]');
    await page.waitForSelector('.notice.ok:has-text("docker_stop: done")');
    expect((await docker.getContainer('wc-victim').inspect()).State.Running).toBe(false);
    // The new state shows where the actions are, and the actions follow it.
    await page.waitForSelector('.action-outcome[data-state="exited"]:has-text("wc-victim is exited")');
    await page.waitForSelector('button[data-tool="docker_start"]');
    expect(await page.locator('button[data-tool="docker_stop"]').count()).toBe(0);

    await page.goto(`${consoleUrl}#/audit`);
    const row = page.locator('.page.audit tr', { hasText: 'docker_stop' }).first();
    await row.waitFor();
    expect(await row.textContent()).toContain('console-admin');
    expect(await row.textContent()).toContain('wc-manager');
    // Newest first, and the header's arrow says so; each call shows how long it took.
    expect(await page.getAttribute('.page.audit th[aria-sort]', 'aria-sort')).toBe('descending');
    expect(await row.locator('td').nth(1).textContent()).toMatch(/^\d+(\.\d)? (ms|s)$|^\d+ min/);
    await screenshot(page, 'console-audit');
    // Filters are applied by the broker: a tool and an outcome keep the stop; an identity nobody has leaves nothing.
    await page.selectOption('.page.audit select[name="tool"]', 'docker_stop');
    await page.selectOption('.page.audit select[name="outcome"]', 'ok');
    await page.waitForFunction(() => [...document.querySelectorAll('.page.audit tbody tr td:nth-child(4)')].every((td) => td.textContent === 'docker_stop'));
    expect(await page.locator('.page.audit tbody tr', { hasText: 'docker_stop' }).count()).toBeGreaterThan(0);
    await page.selectOption('.page.audit select[name="range"]', '1');
    await page.fill('.page.audit input[name="identity"]', 'no-such-identity');
    await page.waitForSelector('.page.audit td.empty:has-text("No audit row matches.")');
    // The whole row can be read: the table scrolls inside its frame rather than cutting the reason off.
    const frame = await page.$eval('.page.audit .table-frame', (el) => getComputedStyle(el).overflowX);
    expect(frame).toBe('auto');
  });

  it('refuses a cross-origin POST and a POST without the CSRF token', async () => {
    const foreign = await page.evaluate(async (url) => {
      const response = await fetch(`${url}api/call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
        body: JSON.stringify({ tool: 'docker_start', args: { host: 'wc-manager', name: 'wc-victim' } }),
      });
      return response.status;
    }, consoleUrl);
    // The browser sets Origin itself (a page cannot forge it): same origin here, so the missing CSRF header is what refuses it.
    expect(foreign).toBe(403);
    const crossSite = await fetch(`${consoleUrl}api/call`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: 'http://evil.example',
        cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; '),
      },
      body: JSON.stringify({ tool: 'docker_start', args: { host: 'wc-manager', name: 'wc-victim' } }),
    });
    expect(crossSite.status).toBe(403);
    expect(((await crossSite.json()) as { error: { message: string } }).error.message).toMatch(/Origin/);
    expect((await docker.getContainer('wc-victim').inspect()).State.Running).toBe(false);

    const other = await browser.newPage();
    try {
      await other.goto('data:text/html,<p>elsewhere</p>');
      const status = await other.evaluate(async (url) => {
        try {
          await fetch(`${url}api/call`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"tool":"docker_start","args":{}}',
            credentials: 'include',
          });
          return 'sent';
        } catch {
          return 'blocked';
        }
      }, consoleUrl);
      // A cross-origin JSON POST needs a preflight, which the console never grants.
      expect(status).toBe('blocked');
    } finally {
      await other.close();
    }
    expect((await docker.getContainer('wc-victim').inspect()).State.Running).toBe(false);
    expect(problems.filter((p) => !/Failed to load resource/.test(p))).toEqual([]);
  });

  it('says when the broker does not answer, and follows the log again once it does', async () => {
    await page.goto(`${consoleUrl}#/host/wc-manager`);
    await page.click('tr[data-key="wc-ticker"]');
    await page.waitForSelector('.log-status:has-text("following")');
    // Every call fails as a dropped connection does, the way a restarting broker looks to the browser.
    await page.route('**/api/call', (route) => route.abort('connectionreset'));
    await page.waitForSelector('.log-status:has-text("no answer from the broker")');
    await page.click('button[data-tool="docker_restart"]');
    await page.waitForSelector('.notice.error:has-text("docker_restart: no answer from the broker")');
    expect(await page.textContent('.notice.error')).toContain('whether a change ran is unknown');
    await page.unroute('**/api/call');
    await page.waitForSelector('.log-status:has-text("following")');

    // A read that loses its connection once is sent again: the follow goes on without a word of it.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { statuses: string[] }).statuses = seen;
      const status = document.querySelector('.log-status');
      if (status) new MutationObserver(() => seen.push(status.textContent ?? '')).observe(status, { childList: true, characterData: true, subtree: true });
    });
    // Only the follow's reads count, so that a page refresh's calls in between cannot shift which attempt is dropped.
    let sent = 0;
    await page.route('**/api/call', (route) => {
      if (!route.request().postData()?.includes('"tool":"docker_logs"')) return route.continue();
      return sent++ % 2 === 0 ? route.abort('connectionreset') : route.continue();
    });
    // Three reads dropped once each, and answered on their second attempt.
    await waitFor(async () => sent >= 6 && (await page.evaluate(() => (window as unknown as { statuses: string[] }).statuses.length)) >= 3, {
      what: 'three reads of the log through a dropped connection',
      timeoutMs: 60_000,
    });
    await page.unroute('**/api/call');
    const statuses = await page.evaluate(() => (window as unknown as { statuses: string[] }).statuses);
    expect(statuses.length).toBeGreaterThanOrEqual(3);
    expect(statuses.every((text) => text.startsWith('following'))).toBe(true);
    expect(problems.filter((p) => !/Failed to load resource/.test(p))).toEqual([]);
  });
});

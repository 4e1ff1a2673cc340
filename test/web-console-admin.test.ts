/// <reference lib="dom" />
// Functions passed to page.evaluate run in the browser.
import type Docker from 'dockerode';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { identityToken } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { buildWebAssets } from './harness/web-assets.ts';

/** Ignores SIGTERM (a shell as PID 1 without a trap), so a restart waits for the engine's kill: long enough to watch. */
const STUBBORN = 'wa-stubborn';

async function signIn(page: Page, url: string, token: string, name: string): Promise<void> {
  await page.goto(url);
  await page.fill('input[name=token]', token);
  await page.click('button[type=submit]');
  await page.waitForSelector(`nav .who:has-text("${name}")`);
}

describe('live actions and the admin screens of the web console in Chromium', () => {
  let assets: { dir: string; remove(): void };
  let fleet: TestFleet;
  let docker: Docker;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  let problems: string[];
  let consoleUrl: string;

  beforeAll(async () => {
    docker = testDocker();
    await removeContainers(docker, [STUBBORN]);
    assets = await buildWebAssets();
    await runContainer(docker, { name: STUBBORN, command: ['sh', '-c', 'while true; do sleep 1; done'] });
    fleet = await startTestFleet({ operationsLevel: 3, webListen: '127.0.0.1:0', webAssetsDir: assets.dir });
    await fleet.addAgent('wa-host', { collectors: 'default', dockerAddress: inject('dockerHost') });
    consoleUrl = fleet.broker.web?.url ?? '';
    browser = await launchChromium();
    admin = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await admin.newPage();
    problems = watchProblems(page);
    await signIn(page, consoleUrl, await identityToken(fleet.broker, 3, undefined, 'wa-admin'), 'wa-admin');
  });

  afterAll(async () => {
    await browser?.close();
    await fleet?.stop();
    assets?.remove();
    if (docker) await removeContainers(docker, [STUBBORN]);
  });

  it("shows a restart's progress from the broker where its button was, then the new state in its place", async () => {
    const before = (await docker.getContainer(STUBBORN).inspect()).State.StartedAt;
    await page.goto(`${consoleUrl}#/host/wa-host`);
    await page.click(`tr[data-key="${STUBBORN}"]`);
    await page.click('button[data-tool="docker_restart"]');
    // While it runs, its button is gone and the progress is in its place, with what the engine did so far.
    const progress = page.locator('.container-panel .actions .action-progress');
    await progress.waitFor();
    expect(await page.locator('button[data-tool="docker_restart"]').count()).toBe(0);
    expect(await page.locator('button[data-tool="docker_stop"]').isDisabled()).toBe(true);
    await page.waitForSelector('.action-progress[data-step*="event=\\"kill\\""]');
    expect(await progress.textContent()).toMatch(/^restarting wa-stubborn… wa-host: event="kill".* · \d+ s$/);
    await screenshot(page, 'console-action-progress');
    // Then the state it left, where the progress was, and the buttons that state offers.
    await page.waitForSelector('.action-outcome[data-state="running"]:has-text("wa-stubborn is running after restart")', { timeout: 30_000 });
    expect(await progress.count()).toBe(0);
    await page.waitForSelector('button[data-tool="docker_restart"]:not([disabled])');
    expect(await page.locator('button[data-tool="docker_start"]').count()).toBe(0);
    expect((await docker.getContainer(STUBBORN).inspect()).State.StartedAt).not.toBe(before);
  });

  it('lets a level-3 identity create a join token, shown once, revoke it after naming it, and find both in the audit', async () => {
    await page.goto(`${consoleUrl}#/admin`);
    await page.waitForSelector('.page.admin');
    await page.fill('.admin-form[data-form="token"] input[name="labels"]', 'role=web');
    await page.click('.admin-form[data-form="token"] button[type="submit"]');
    const token = (await page.locator('.admin-secret code[data-secret="token"]').textContent()) ?? '';
    expect(token).toMatch(/^fm1\.[0-9a-f]{16}\./);
    const id = token.split('.')[1] ?? '';
    expect(await page.locator('.admin-secret code[data-secret="agent command"]').textContent()).toContain(`--token ${token}`);
    const row = page.locator(`.page.admin tr[data-key="${id}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-status')).toBe('usable');
    expect(await row.textContent()).toContain('role=web');
    await screenshot(page, 'console-admin');

    await page.click(`button[data-revoke="${id}"]`);
    const dialog = page.locator('dialog.confirm-dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(`join-token:${id}`);
    await page.click('dialog.confirm-dialog button[data-action="confirm"]');
    await page.waitForSelector(`.page.admin tr[data-key="${id}"][data-status="revoked"]`);
    expect((await fleet.broker.store.tokens.get(id))?.revokedAt).not.toBeNull();

    await page.goto(`${consoleUrl}#/audit`);
    for (const tool of ['token create', 'token revoke']) {
      const audited = page.locator('.page.audit tbody tr', { hasText: tool }).first();
      await audited.waitFor();
      expect(await audited.textContent()).toContain('wa-admin');
      expect(await audited.textContent()).toContain(`join-token:${id}`);
    }
    expect(await page.textContent('.page.audit')).not.toContain(token);
  });

  it('lets a level-3 identity create an identity whose token signs in, and revoke it', async () => {
    await page.goto(`${consoleUrl}#/admin`);
    await page.fill('.admin-form[data-form="identity"] input[name="name"]', 'wa-ci');
    await page.selectOption('.admin-form[data-form="identity"] select[name="level"]', '1');
    await page.click('.admin-form[data-form="identity"] button[type="submit"]');
    const token = (await page.locator('.admin-secret code[data-secret="bearer token"]').textContent()) ?? '';
    expect(token).toMatch(/^fmc1\./);
    await page.waitForSelector('.page.admin tr[data-key="wa-ci"]');
    const ci = await browser.newContext();
    try {
      await signIn(await ci.newPage(), consoleUrl, token, 'wa-ci');
    } finally {
      await ci.close();
    }
    await page.click('button[data-revoke="wa-ci"]');
    await page.click('dialog.confirm-dialog button[data-action="confirm"]');
    await page.waitForSelector('.admin-status.ok:has-text("identity:wa-ci revoked")');
    expect(await page.locator('.page.admin tr[data-key="wa-ci"]').count()).toBe(0);
    expect(await fleet.broker.store.identities.findLiveByName('wa-ci')).toBeUndefined();
    expect(problems.filter((p) => !/Failed to load resource/.test(p))).toEqual([]);
  });

  it("sets a host's alert thresholds from the console through set_alert_thresholds, audited as an MCP call is", async () => {
    await page.goto(`${consoleUrl}#/admin`);
    const cpu = page.locator('.page.admin tr[data-key="wa-host"] td[data-metric="cpu"]');
    await page.waitForSelector('.page.admin tr[data-key="wa-host"] td[data-metric="cpu"]:has-text("90 %")');
    await page.selectOption('.admin-form[data-form="thresholds"] select[name="host"]', 'wa-host');
    await page.fill('.admin-form[data-form="thresholds"] input[name="cpu"]', '77');
    await page.click('.admin-form[data-form="thresholds"] button[type="submit"]');
    await page.waitForSelector('.page.admin tr[data-key="wa-host"] td[data-metric="cpu"]:has-text("77 %")');
    expect(await page.textContent('.page.admin tr[data-key="wa-host"] td[data-metric="memory"]')).toBe('85 %');
    expect(await cpu.textContent()).toBe('77 %');
    const rows = await fleet.broker.store.audit.recent({ limit: 5, tool: 'set_alert_thresholds' });
    expect(rows[0]).toMatchObject({ identity: 'wa-admin', outcome: 'ok', targets: ['wa-host'], arguments: { host: 'wa-host', cpu_threshold: 77 } });
  });

  it('tests the notification channels, and says so where the broker has none', async () => {
    await page.goto(`${consoleUrl}#/admin`);
    await page.click('button[data-tool="notify_test"]');
    await page.waitForSelector('.admin-status.error:has-text("the broker has no notification channel configured — Start the broker with --notify-webhook")');
  });

  it('refuses a level-1 identity the admin screens on the server, not only in its navigation', async () => {
    const operator = await browser.newContext();
    try {
      const other = await operator.newPage();
      await signIn(other, consoleUrl, await identityToken(fleet.broker, 1, undefined, 'wa-operator'), 'wa-operator');
      expect(await other.locator('nav a[href="#/admin"]').count()).toBe(0);
      const tokensBefore = (await fleet.broker.store.tokens.list()).length;
      // What the page would send, with this session's own CSRF token.
      const answers = await other.evaluate(async () => {
        const headers = { 'content-type': 'application/json', 'x-fleetmesh-csrf': localStorage.getItem('fleetmesh.csrf') ?? '' };
        const create = await fetch('/api/admin/tokens', { method: 'POST', headers, body: '{"uses":1}' });
        const list = await fetch('/api/admin/identities', { headers });
        return [create.status, list.status];
      });
      expect(answers).toEqual([404, 404]);
      expect((await fleet.broker.store.tokens.list()).length).toBe(tokensBefore);
      const refused = await fleet.broker.store.audit.recent({ limit: 5, identity: 'wa-operator', refused: true });
      expect(refused.map((row) => row.tool)).toContain('POST /api/admin/tokens');
    } finally {
      await operator.close();
    }
  });
});

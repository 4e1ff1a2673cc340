/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Functions passed to page.evaluate and waitForFunction run in the browser.
import { gzipSync } from 'node:zlib';
import type Docker from 'dockerode';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { createService, removeSwarmObjects } from './harness/swarm-services.ts';
import { waitFor } from './harness/wait.ts';
import { buildWebAssets } from './harness/web-assets.ts';
import { type PveTestFleet, startPveTestFleet } from './proxmox/pve-test-fleet.ts';

/** What a first visit may download (gzipped JavaScript), as bench/web measures it: issue 18's budget. */
const FIRST_LOAD_JS_GZIP_BUDGET_BYTES = 300 * 1024;

const CONTAINERS = ['wo-app', 'wo-crash', 'wo-sandbox'];
const SERVICES = ['wo-svc'];
const SECRET = 'wo-secret';
const CONFIG = 'wo-config';
const VOLUME = 'wo-data';
/** A label value written by whoever runs the container: shown as text, never as markup. */
const MARKUP = '<img src=x onerror="window.__pwned=1">';
/** An environment value that must never reach the console. */
const PASSWORD = 'hunter2-wo-secret-value';

/**
 * Waits until a selector is on the page, reloading it between looks: what the
 * index learns from an agent's next report, or a history read once a minute,
 * shows on the page's next load.
 */
async function shownAfterReloads(page: Page, selector: string, what: string): Promise<void> {
  await waitFor(
    async () => {
      if ((await page.locator(selector).count()) > 0) return true;
      await page.reload();
      await page.waitForSelector('.page');
      return false;
    },
    { what, timeoutMs: 90_000, intervalMs: 3000 },
  );
}

describe('every object a page, in Chromium, from a real broker and real agents', () => {
  let assets: { dir: string; remove(): void };
  let pve: PveTestFleet;
  let docker: Docker;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let consoleUrl: string;
  let firstLoadJsGzipBytes = 0;

  beforeAll(async () => {
    docker = testDocker();
    await removeSwarmObjects(docker, { services: SERVICES, secrets: [SECRET], configs: [CONFIG], volumes: [VOLUME] });
    await removeContainers(docker, CONTAINERS);
    assets = await buildWebAssets();
    await runContainer(docker, {
      name: 'wo-app',
      command: ['sh', '-c', 'trap "exit 0" TERM; i=0; while true; do echo "line $i"; i=$((i+1)); sleep 0.2; done'],
      env: [`DB_PASSWORD=${PASSWORD}`, 'MODE=test'],
      labels: { 'wo.note': MARKUP },
    });
    await runContainer(docker, { name: 'wo-crash', command: ['sh', '-c', 'echo about to fail; exit 3'] });
    await runContainer(docker, { name: 'wo-sandbox', command: ['sh', '-c', 'while true; do sleep 1; done'], labels: { 'fleetmesh.sandbox': 'sbox-wo' } });
    await docker.createVolume({ Name: VOLUME });
    await docker.createSecret({ Name: SECRET, Data: Buffer.from(PASSWORD).toString('base64') });
    await docker.createConfig({ Name: CONFIG, Data: Buffer.from('key: value').toString('base64') });
    await createService(docker, { name: 'wo-svc', command: ['sh', '-c', 'while true; do sleep 1; done'] });

    pve = await startPveTestFleet({ broker: { operationsLevel: 3, webListen: '127.0.0.1:0', webAssetsDir: assets.dir } });
    await pve.addPveAgent('wo-pve', { node: 'pve1' });
    await pve.fleet.addAgent('wo-host', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      domainFlags: { 'swarm-name': 'wo-swarm' },
      sampleIntervalMs: 500,
      token: await pve.fleet.token({ roles: ['swarm-manager'] }),
    });
    // A host with an engine that stops answering: the fleet-wide pages keep it, with its error.
    const gone = await pve.fleet.addAgent('wo-gone', { collectors: 'default', dockerAddress: inject('dockerHost') });
    await pve.fleet.stopAgent(gone);

    consoleUrl = pve.fleet.broker.web?.url ?? '';
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    problems = watchProblems(page);
    const scripts: Promise<number>[] = [];
    page.on('response', (response) => {
      if (response.request().resourceType() === 'script') scripts.push(response.body().then((body) => gzipSync(body).length));
    });
    await page.goto(consoleUrl);
    await page.fill('input[name=token]', await identityToken(pve.fleet.broker, 3, undefined, 'objects-admin'));
    await page.click('button[type=submit]');
    await page.waitForSelector('nav .who:has-text("objects-admin")');
    await page.waitForSelector('.overview');
    firstLoadJsGzipBytes = (await Promise.all(scripts)).reduce((sum, bytes) => sum + bytes, 0);
  });

  afterAll(async () => {
    await browser?.close();
    await pve?.stop();
    assets?.remove();
    if (docker) {
      await removeSwarmObjects(docker, { services: SERVICES, secrets: [SECRET], configs: [CONFIG], volumes: [VOLUME] });
      await removeContainers(docker, CONTAINERS);
    }
  });

  it('loads every page of the console within the first-load budget', () => {
    expect(firstLoadJsGzipBytes).toBeGreaterThan(0);
    expect(firstLoadJsGzipBytes).toBeLessThan(FIRST_LOAD_JS_GZIP_BUDGET_BYTES);
  });

  it('lists the containers of every host with their figures and a usage sparkline, keeps a failed host with its error, sorts and searches', async () => {
    await page.click('nav a[href="#/containers"]');
    const app = page.locator('tr[data-key="wo-host/wo-app"]');
    await app.waitFor();
    await page.waitForSelector('tr[data-key="wo-host/wo-crash"]');
    // The stopped agent is not dropped: its host is named with why it has no answer.
    await page.waitForSelector('.failed-hosts li[data-host="wo-gone"]');
    expect(await page.textContent('.failed-hosts li[data-host="wo-gone"]')).toMatch(/agent_offline|offline/);
    // CPU and memory of its limit, and the CPU history the broker keeps, drawn as a line.
    await page.waitForFunction(() => /\d+\.\d %/.test(document.querySelector('tr[data-key="wo-host/wo-app"]')?.textContent ?? ''), undefined, {
      timeout: 30_000,
    });
    expect(await app.textContent()).toMatch(/of \d/);
    await shownAfterReloads(page, 'tr[data-key="wo-host/wo-app"] svg.usage-sparkline', 'a sparkline of wo-app');
    expect(Number(await page.getAttribute('tr[data-key="wo-host/wo-app"] svg.usage-sparkline', 'data-points'))).toBeGreaterThan(0);
    await screenshot(page, 'console-containers');
    // Sorted by restarts, then searched.
    await page.click('.page.containers th:has-text("restarts")');
    expect(await page.getAttribute('.page.containers th:has-text("restarts")', 'aria-sort')).toBe('ascending');
    await page.fill('.page.containers .table-search', 'wo-crash');
    await page.waitForFunction(() => document.querySelectorAll('.page.containers tbody tr').length === 1);
    expect(await page.locator('tr[data-key="wo-host/wo-crash"]').count()).toBe(1);
  }, 180_000);

  it("shows a container's configuration, its log newest first with timestamps, and its history of events and audited calls", async () => {
    const client = await mcpClient(pve.fleet.broker, await identityToken(pve.fleet.broker, 3, undefined, 'objects-mcp'));
    try {
      expect((await call(client, 'docker_restart', { host: 'wo-host', name: 'wo-app', timeout_s: 1 })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
    await page.goto(`${consoleUrl}#/`);
    await page.goto(`${consoleUrl}#/containers`);
    await page.click('tr[data-key="wo-host/wo-app"] a.container-link');
    await page.waitForSelector('.page.container[data-name="wo-app"] .object-details');
    expect(page.url()).toContain('#/container/wo-host/wo-app');
    const text = (await page.textContent('.page.container')) ?? '';
    expect(text).toContain(inject('testImage'));
    // The command as a shell would read it back.
    expect(text).toContain(`sh -c 'trap "exit 0" TERM;`);
    // The variables by name; a value never reaches the console.
    expect(await page.locator('.env-names code', { hasText: 'DB_PASSWORD' }).count()).toBe(1);
    expect(text).not.toContain(PASSWORD);
    // A label is shown as the text it is.
    expect(text).toContain(MARKUP);
    expect(await page.locator('.page.container img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.waitForSelector('.page.container td:has-text("bridge")');
    // The log, newest line first, each with its time.
    await page.waitForSelector('.page.container .log-lines.newest-first .log-line time');
    // The restart began the count again: times, not line numbers, say which line is newest.
    const times = await page.$$eval('.page.container .log-line time', (lines) => lines.map((l) => Date.parse(l.getAttribute('datetime') ?? '')));
    expect(times.length).toBeGreaterThan(2);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times[0]).toBeGreaterThan(times.at(-1) ?? Number.POSITIVE_INFINITY);
    // The engine's events for it, and the audited restart by the MCP identity.
    await page.waitForSelector('.engine-events li[data-action="restart"], .engine-events li[data-action="start"]');
    await page.waitForSelector('.audited-calls li[data-tool="docker_restart"]:has-text("objects-mcp")');
    await screenshot(page, 'console-container');
    // A container that exited says with what code.
    await page.goto(`${consoleUrl}#/container/wo-host/wo-crash`);
    await page.waitForSelector('.page.container[data-name="wo-crash"] .object-details:has-text("exit code 3")');
  });

  it("links a host's own pages: its images, volumes and networks, its services and journal, its packages", async () => {
    await page.goto(`${consoleUrl}#/host/wo-host`);
    await page.waitForSelector('.page.host tr[data-key="wo-app"] svg.usage-sparkline', { timeout: 30_000 });
    await page.click('.host-pages a:has-text("Images, volumes and networks")');
    await page.waitForSelector('.page.docker-objects[data-host="wo-host"]');
    await page.waitForSelector(`.page.docker-objects td:has-text("${inject('testImage')}")`);
    await shownAfterReloads(page, `.page.docker-objects a:has-text("${VOLUME}")`, 'the volume in the index');
    // The engine's own networks of the host, not the swarm's overlay ones.
    await shownAfterReloads(page, '.page.docker-objects a:text-is("bridge")', 'the bridge network in the index');
    expect(await page.locator('.page.docker-objects a:text-is("ingress")').count()).toBe(0);
    await screenshot(page, 'console-docker-objects');
    await page.click('.page.docker-objects a:text-is("bridge")');
    await page.waitForSelector('.page.object[data-type="local_network"] .object-name:has-text("bridge")');
    expect(await page.textContent('.page.object')).toContain('wo-host');
    await page.goBack();
    await page.waitForSelector('.page.docker-objects');
    await page.click(`.page.docker-objects a:has-text("${VOLUME}")`);
    await page.waitForSelector(`.page.object[data-type="volume"] .object-name:has-text("${VOLUME}")`);

    await page.goto(`${consoleUrl}#/host/wo-host`);
    await page.click('.host-pages a:has-text("Packages")');
    // This machine's dpkg database, as the agent reads it.
    await page.waitForSelector('.page.packages td:has-text("dpkg")');
    expect(await page.textContent('.page.packages')).toMatch(/\d+ installed \(dpkg\)/);
    await page.fill('.page.packages .table-search', 'libc6');
    await page.waitForSelector('.page.packages tr[data-key^="libc6:"]');
    await screenshot(page, 'console-packages');

    await page.goto(`${consoleUrl}#/host/wo-host`);
    await page.click('.host-pages a:has-text("Services and journal")');
    await page.waitForSelector('.page.units[data-host="wo-host"]');
    // The test machine's agent has no systemd to ask: the page says so rather than show an empty table as all.
    await page.waitForSelector('.page.units .muted:has-text("systemd"), .page.units .status-warning, .page.units tbody tr[data-key]');
    await screenshot(page, 'console-units');
  });

  it("gives the swarm's services, tasks, nodes, secrets (names only), configs and networks each a page", async () => {
    await page.goto(`${consoleUrl}#/swarm`);
    await shownAfterReloads(page, `.page.swarm a:has-text("${SECRET}")`, 'the secret on the swarm page');
    await page.waitForSelector(`.page.swarm a:has-text("${CONFIG}")`);
    await page.waitForSelector('.page.swarm a:has-text("wo-svc")');
    await page.waitForSelector('.page.swarm a:has-text("ingress")');
    await screenshot(page, 'console-swarm-objects');
    await page.click(`.page.swarm a:has-text("${SECRET}")`);
    await page.waitForSelector(`.page.object[data-type="secret"] .object-name:has-text("${SECRET}")`);
    expect(await page.textContent('.page.object')).not.toContain(PASSWORD);
    await page.goBack();
    await page.click(`.page.swarm a:has-text("${CONFIG}")`);
    await page.waitForSelector(`.page.object[data-type="config"] .object-name:has-text("${CONFIG}")`);
    await page.goBack();
    await page.click('.page.swarm a:has-text("wo-svc")');
    await page.waitForSelector('.page.object[data-type="service"] .object-name:has-text("wo-svc")');
    await page.goBack();
    await page.click('.page.swarm tr[data-key] a[href^="#/object/task/"]');
    await page.waitForSelector('.page.object[data-type="task"]');
    await page.goBack();
    await page.click('.page.swarm a[href^="#/object/node/"]');
    await page.waitForSelector('.page.object[data-type="node"]');
  });

  it('opens a PVE guest and a sandbox on pages of their own', async () => {
    await page.goto(`${consoleUrl}#/guests`);
    await shownAfterReloads(page, '.page.find-guest td:text-is("web")', 'the guest web');
    await page.click('.page.find-guest td:text-is("web")');
    await page.waitForSelector('.page.object[data-type="guest"] .object-name:has-text("web")');
    await screenshot(page, 'console-guest');

    await page.goto(`${consoleUrl}#/sandboxes`);
    await shownAfterReloads(page, '.page.find-sandbox td:has-text("sbox-wo")', 'the sandbox sbox-wo');
    await page.click('.page.find-sandbox td:has-text("sbox-wo")');
    await page.waitForSelector('.page.object[data-type="sandbox"]:has-text("sbox-wo")');
    expect(problems.filter((p) => !/Failed to load resource/.test(p))).toEqual([]);
  });
});

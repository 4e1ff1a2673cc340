/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Functions passed to page.evaluate run in the browser.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ToolGlobSet } from '../broker/auth/tool-filter.ts';
import { seriousViolations, type Violation } from './harness/accessibility.ts';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { createService, removeSwarmObjects } from './harness/swarm-services.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';
import { buildWebAssets } from './harness/web-assets.ts';
import { buildWidgetHost, openWidgetHost, showWidget } from './harness/widget-host.ts';

const SERVICES = ['ay-web'];
const CONTAINERS = ['ay-ticker', 'ay-exit3'];

/**
 * `npm run screenshots` sets this to docs/images: the README's pictures are
 * then the ones this run takes, from a real broker and agents in Chromium.
 */
const README_PICTURES = process.env.FLEETMESH_README_PICTURES;

/** The README's pictures: which page or widget, under what name. */
const PICTURED = new Set(['console-charts', 'console-host', 'widget-log-viewer', 'widget-swarm-topology']);

/** A tool whose answer each widget shows, with arguments that give it something to show. */
const WIDGET_CALLS: Record<string, [string, Record<string, unknown>]> = {
  'fleet-table': ['docker_list', { host: 'ay-manager' }],
  'find-results': ['find', { query: 'ay-' }],
  'log-viewer': ['docker_logs', { host: 'ay-manager', name: 'ay-ticker', timestamps: true, lines: 20 }],
  'metrics-chart': ['get_metrics', { target: 'host', id: 'ay-manager', metric: 'cpu', range: '1h' }],
  recommendations: ['get_recommendations', {}],
  'swarm-topology': ['get_topology', { view: 'placement' }],
};

describe('every console page and widget in Chromium, checked by axe-core and by keyboard', () => {
  let assets: { dir: string; remove(): void };
  let hostScript: string;
  let fleet: TestFleet;
  let docker: Docker;
  let client: Client;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let consoleUrl: string;
  let adminToken: string;

  /** Saves a picture as a test artifact and, for `npm run screenshots`, the README's copy. */
  async function picture(name: string): Promise<void> {
    await screenshot(page, name);
    if (!README_PICTURES || !PICTURED.has(name)) return;
    mkdirSync(README_PICTURES, { recursive: true });
    await page.screenshot({ path: join(README_PICTURES, `${name}.png`) });
  }

  /** Waits until what the page shows stops changing: its first answers are in. */
  async function settled(target: Page | Frame): Promise<void> {
    let last = '';
    await waitFor(
      async () => {
        const now = await target.evaluate(() => document.body.textContent);
        const same = now === last;
        last = now;
        return same;
      },
      { intervalMs: 400, what: 'the page to settle' },
    );
  }

  async function expectAccessible(target: Page | Frame, name: string): Promise<void> {
    const violations = await seriousViolations(target);
    expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
  }

  /** Every page's or widget's violations, gathered, so one failed run names all there are to fix. */
  async function gather(found: Record<string, Violation[]>, target: Page | Frame, name: string): Promise<void> {
    const violations = await seriousViolations(target);
    if (violations.length) found[name] = violations;
  }

  beforeAll(async () => {
    docker = testDocker();
    await removeSwarmObjects(docker, { services: SERVICES });
    await removeContainers(docker, CONTAINERS);
    [assets, hostScript] = await Promise.all([buildWebAssets(), buildWidgetHost()]);
    await createService(docker, { name: 'ay-web', replicas: 2, command: ['sh', '-c', 'while true; do echo "ay-web alive"; sleep 1; done'] });
    await runContainer(docker, { name: 'ay-exit3', command: ['sh', '-c', 'exit 3'] });
    await runContainer(docker, { name: 'ay-ticker', command: ['sh', '-c', 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.5; done'] });
    // Approvals on (for level 3 only, which nothing here calls), so the approvals page is listed too.
    fleet = await startTestFleet({
      operationsLevel: 3,
      webListen: '127.0.0.1:0',
      webAssetsDir: assets.dir,
      approvals: { level: 3, tools: new ToolGlobSet([]), ttlMs: 120_000 },
    });
    await fleet.addAgent('ay-manager', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      labels: { env: 'prod' },
      // Containers sampled every second, so the pictures show their CPU from the start.
      containerSampleIntervalMs: 1000,
      domainFlags: { 'swarm-name': 'a11y-swarm' },
      token: await fleet.token({ roles: ['swarm-manager'] }),
    });
    await fleet.addAgent('ay-edge', { labels: { env: 'dev' } });
    adminToken = await identityToken(fleet.broker, 3, undefined, 'a11y-admin');
    client = await mcpClient(fleet.broker, adminToken);
    consoleUrl = fleet.broker.web?.url ?? '';
    // What the pages and widgets show: the swarm's service and the exited container indexed, a first minute of history.
    await waitFor(async () => (await call(client, 'find', { type: 'service', query: 'ay-web' })).structuredContent.total === 1, {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: 'ay-web indexed',
    });
    await waitFor(async () => ((await call(client, 'get_recommendations', {})).structuredContent.findings as unknown[]).length > 0, {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: 'a recommendation',
    });
    await waitFor(
      async () => ((await call(client, 'get_metrics', { target: 'fleet', top: 5, by: 'container' })).structuredContent.ranking as unknown[]).length > 0,
      { timeoutMs: 30_000, intervalMs: 500, what: "a container's CPU in the history" },
    );
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    problems = watchProblems(page);
  });

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await fleet?.stop();
    assets?.remove();
    if (docker) {
      await removeSwarmObjects(docker, { services: SERVICES });
      await removeContainers(docker, CONTAINERS);
    }
  });

  it('has no serious or critical violation on the sign-in form', async () => {
    await page.goto(consoleUrl);
    await page.waitForSelector('form.sign-in');
    await expectAccessible(page, 'sign-in');
    await picture('console-sign-in');
    await page.fill('input[name=token]', adminToken);
    await page.press('input[name=token]', 'Enter');
    await page.waitForSelector('nav .who');
  });

  it('has no serious or critical violation on any page the navigation lists, nor on a host and an object page', async () => {
    const links = await page.$$eval('header nav a', (anchors) => anchors.map((a) => a.getAttribute('href') ?? '').filter((href) => href.startsWith('#/')));
    // Every page, whatever domains are built in: the navigation is the list.
    expect(links).toEqual(expect.arrayContaining(['#/', '#/charts', '#/recommendations', '#/approvals', '#/audit']));
    const pages = [...new Set(links)].map((href) => [href, `console-${href.slice(2).replace(/\W+/g, '-') || 'fleet'}`] as const);
    pages.push(['#/host/ay-manager', 'console-host']);
    const found: Record<string, Violation[]> = {};
    for (const [href, name] of pages) {
      await page.goto(`${consoleUrl}${href}`);
      await page.waitForSelector('main .page');
      if (href === '#/charts') await page.waitForSelector('.metrics-chart[data-points]:not([data-points="0"]) canvas');
      if (href === '#/host/ay-manager') await page.waitForSelector('tr[data-key="ay-ticker"]');
      await settled(page);
      await gather(found, page, href);
      await picture(name);
    }
    expect(found, JSON.stringify(found, null, 1)).toEqual({});
    expect(problems).toEqual([]);
  });

  it('reaches the navigation with Tab, opens a page with Enter, and finds and opens an object from the keyboard alone', async () => {
    await page.goto(`${consoleUrl}#/`);
    await page.waitForSelector('tr[data-key="ay-manager"]');
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('header nav') !== null)).toBe(true);
    // Whoever moves by keyboard sees where they are.
    expect(await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle)).not.toBe('none');
    for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.getAttribute('href'))) !== '#/charts'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.page.charts');
    expect(new URL(page.url()).hash).toBe('#/charts');

    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.classList.contains('search-input'))).toBe(true);
    await page.keyboard.type('ay-ticker');
    await page.waitForSelector('.search-option[data-type="container"][data-name="ay-ticker"]');
    await settled(page);
    await expectAccessible(page, 'search results');
    while ((await page.getAttribute('[role=option][aria-selected=true]', 'data-name')) !== 'ay-ticker') await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForSelector('main .page');
    expect(new URL(page.url()).hash).toMatch(/^#\/object\/container\//);
    await settled(page);
    await expectAccessible(page, 'container object page');
    await picture('console-object-container');

    // A host row of the fleet's table opens its page from the keyboard too.
    await page.goto(`${consoleUrl}#/`);
    await page.focus('tr[data-key="ay-manager"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.page.host[data-host="ay-manager"]');
    expect(problems).toEqual([]);
  });

  it('has no serious or critical violation in any widget', async () => {
    const widgetPage = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    const widgetProblems = watchProblems(widgetPage);
    try {
      await openWidgetHost(widgetPage, hostScript, client);
      const found: Record<string, Violation[]> = {};
      const tools = (await client.listTools()).tools;
      const uris = new Set(tools.map((t) => (t._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri).filter((uri) => uri !== undefined));
      const widgets = [...uris].map((uri) => uri.replace(/^ui:\/\/fleetmesh\//, '').replace(/\.html$/, ''));
      // A widget added later fails here until it has a call below.
      expect(widgets.sort()).toEqual(Object.keys(WIDGET_CALLS).sort());
      for (const [widget, [tool, args]] of Object.entries(WIDGET_CALLS)) {
        const uri = tools.find((t) => t.name === tool)?._meta?.ui as { resourceUri: string };
        const html = ((await client.readResource({ uri: uri.resourceUri })).contents[0] as { text: string }).text;
        const frame = await showWidget(widgetPage, html, args, await call(client, tool, args));
        await settled(frame);
        await gather(found, frame, widget);
        await screenshot(widgetPage, `widget-${widget}`);
        if (README_PICTURES && PICTURED.has(`widget-${widget}`)) {
          mkdirSync(README_PICTURES, { recursive: true });
          await (await frame.frameElement()).screenshot({ path: join(README_PICTURES, `widget-${widget}.png`) });
        }
      }
      expect(found, JSON.stringify(found, null, 1)).toEqual({});
      expect(widgetProblems).toEqual([]);
    } finally {
      await widgetPage.close();
    }
  });
});

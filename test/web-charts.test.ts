/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Functions passed to page.evaluate run in the browser.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';
import { buildWebAssets } from './harness/web-assets.ts';

const CONTAINERS = ['ch-ticker'];

interface Metrics {
  id: string;
  unit: string;
  percent_of?: string;
  series: { name: string; points: { t: number; v: number | null }[] }[];
  ranking?: { name: string; value: number; host?: string }[];
}

describe("the fleet's charts, from a real broker and agents, in Chromium", () => {
  let assets: { dir: string; remove(): void };
  let fleet: TestFleet;
  let docker: Docker;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let admin: Client;
  let devOnly: Client;
  let adminToken: string;
  let devOnlyToken: string;
  let consoleUrl: string;

  const metrics = async (client: Client, args: Record<string, unknown>) =>
    (await call(client, 'get_metrics', { target: 'fleet', ...args })).structuredContent as unknown as Metrics;

  async function signIn(token: string): Promise<Page> {
    const opened = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    problems = watchProblems(opened);
    await opened.goto(consoleUrl);
    await opened.fill('input[name=token]', token);
    await opened.click('button[type=submit]');
    await opened.waitForSelector('nav .who');
    return opened;
  }

  beforeAll(async () => {
    docker = testDocker();
    await removeContainers(docker, CONTAINERS);
    assets = await buildWebAssets();
    await runContainer(docker, { name: 'ch-ticker', command: ['sh', '-c', 'while true; do echo tick; sleep 0.5; done'] });
    fleet = await startTestFleet({ webListen: '127.0.0.1:0', webAssetsDir: assets.dir });
    // Containers sampled every second, so a container's CPU (the share since its previous sample) comes at once.
    await fleet.addAgent('ch-prod-1', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      labels: { env: 'prod' },
      containerSampleIntervalMs: 1000,
    });
    await fleet.addAgent('ch-dev-1', { labels: { env: 'dev' } });
    adminToken = await identityToken(fleet.broker, 0, undefined, 'charts-admin');
    devOnlyToken = await identityToken(fleet.broker, 0, ['host:ch-dev-*'], 'charts-dev');
    admin = await mcpClient(fleet.broker, adminToken);
    devOnly = await mcpClient(fleet.broker, devOnlyToken);
    consoleUrl = fleet.broker.web?.url ?? '';
    browser = await launchChromium();
    // The first minute of history, with a container's CPU, before anything is drawn.
    await waitFor(async () => ((await metrics(admin, { top: 5, by: 'container' })).ranking ?? []).some((r) => r.name === 'ch-prod-1/ch-ticker'), {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
  });

  afterAll(async () => {
    await browser?.close();
    await admin?.close();
    await devOnly?.close();
    await fleet?.stop();
    assets?.remove();
    if (docker) await removeContainers(docker, CONTAINERS);
  });

  it('answers get_metrics for the fleet and for a label selector, with its unit, ranked hosts and containers, and disk as a host figure', async () => {
    const cpu = await metrics(admin, { selector: 'env=prod' });
    expect(cpu).toMatchObject({ id: 'fleet env=prod', unit: 'percent', percent_of: 'machine' });
    expect(cpu.series[0]?.points.some((p) => p.v !== null)).toBe(true);
    const disk = await metrics(admin, { metric: 'disk' });
    expect(disk.unit).toBe('percent');
    expect(disk.series[0]?.points.filter((p) => p.v !== null).every((p) => (p.v ?? -1) >= 0 && (p.v ?? 101) <= 100)).toBe(true);
    expect((await metrics(admin, { metric: 'memory', top: 5 })).ranking?.map((r) => r.name).sort()).toEqual(['ch-dev-1', 'ch-prod-1']);
    expect((await metrics(admin, { top: 5, selector: 'env=dev' })).ranking?.map((r) => r.name)).toEqual(['ch-dev-1']);
    expect((await metrics(admin, { top: 5, by: 'container' })).ranking).toContainEqual(
      expect.objectContaining({ name: 'ch-prod-1/ch-ticker', host: 'ch-prod-1' }),
    );
    const noDisk = await call(admin, 'get_metrics', { target: 'fleet', metric: 'disk', top: 5, by: 'container' });
    expect(noDisk.isError).toBe(true);
    expect(JSON.stringify(noDisk.structuredContent)).toContain('invalid_argument');
    const badSelector = await call(admin, 'get_metrics', { target: 'fleet', selector: 'env=prod,=x' });
    expect(badSelector.isError).toBe(true);
  });

  it('counts only the hosts and containers an identity may read', async () => {
    expect((await metrics(devOnly, { top: 5 })).ranking?.map((r) => r.name)).toEqual(['ch-dev-1']);
    expect((await metrics(devOnly, { top: 5, by: 'container' })).ranking).toEqual([]);
    expect((await metrics(devOnly, { selector: 'env=prod' })).series[0]?.points.every((p) => p.v === null)).toBe(true);
  });

  it('draws CPU, memory and disk of the fleet with units on their axes, says the history is young, and ranks the busiest', async () => {
    page = await signIn(adminToken);
    await page.click('nav a[href="#/charts"]');
    await page.waitForSelector('.page.charts');
    for (const title of ['CPU', 'Memory', 'Disk']) {
      const chart = `.metrics-chart[aria-label="${title}"]`;
      await page.waitForFunction((selector) => Number(document.querySelector(selector)?.getAttribute('data-points')) > 0, chart);
      await page.waitForSelector(`${chart} canvas`);
      // The broker started moments ago: an hour's chart of a few minutes says so.
      expect(await page.getAttribute(chart, 'data-history')).toBe('young');
      expect(await page.textContent(`${chart} .chart-caption`)).toContain('History is young');
    }
    expect(await page.getAttribute('.metrics-chart[aria-label="CPU"] .chart-canvas', 'aria-label')).toContain('CPU (% of machine)');
    expect(await page.getAttribute('.metrics-chart[aria-label="Memory"] .chart-canvas', 'aria-label')).toContain('memory used (bytes)');
    expect(await page.getAttribute('.metrics-chart[aria-label="Disk"] .chart-canvas', 'aria-label')).toContain('fullest disk (%)');
    await page.waitForSelector('[data-ranking="hosts"] tr:has-text("ch-prod-1")');
    await page.waitForSelector('[data-ranking="hosts"] tr:has-text("ch-dev-1")');
    await page.waitForSelector('[data-ranking="containers"] tr:has-text("ch-prod-1/ch-ticker")');
    expect(await page.textContent('[data-ranking="hosts"] th.numeric')).toContain('CPU (% of machine)');
    expect(await page.textContent('[data-ranking="hosts"] td.numeric')).toMatch(/^\d+\.\d %$/);
    await screenshot(page, 'console-charts');

    await page.click('.rankings button:has-text("disk")');
    await page.waitForSelector('[data-ranking="containers"] p:has-text("Disk is measured per host")');
    await page.waitForSelector('[data-ranking="hosts"] th.numeric:has-text("fullest disk (%)")');
  });

  it('narrows every chart and ranking to a label selector, says when nothing matches, and shows a bad selector as an error', async () => {
    await page.fill('#charts-selector', 'env=prod');
    await page.press('#charts-selector', 'Enter');
    await page.waitForSelector('.charts-scope:has-text("env=prod")');
    await page.click('.rankings button:has-text("cpu")');
    await page.waitForSelector('[data-ranking="hosts"] tr:has-text("ch-prod-1")');
    expect(await page.locator('[data-ranking="hosts"] tr:has-text("ch-dev-1")').count()).toBe(0);

    await page.fill('#charts-selector', 'env=nowhere');
    await page.press('#charts-selector', 'Enter');
    await page.waitForSelector('.metrics-chart[aria-label="CPU"][data-history="empty"]');
    expect(await page.textContent('.metrics-chart[aria-label="CPU"] .chart-caption')).toContain('No samples in this range yet');
    await page.waitForSelector('[data-ranking="hosts"] p:has-text("No host has a CPU figure")');

    await page.fill('#charts-selector', 'env=prod,=x');
    await page.press('#charts-selector', 'Enter');
    await page.waitForSelector('.page.charts .error[role=alert]:has-text("not a label condition")');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows an identity with a grant on some hosts only those hosts', async () => {
    const limited = await signIn(devOnlyToken);
    try {
      await limited.goto(`${consoleUrl}#/charts`);
      await limited.waitForSelector('[data-ranking="hosts"] tr:has-text("ch-dev-1")');
      expect(await limited.locator('[data-ranking="hosts"] tr:has-text("ch-prod-1")').count()).toBe(0);
      await limited.waitForSelector('[data-ranking="containers"] p:has-text("No container has a CPU figure")');
      expect(problems).toEqual([]);
    } finally {
      await limited.close();
    }
  });
});

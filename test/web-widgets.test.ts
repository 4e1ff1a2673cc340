/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Functions passed to frame.evaluate run in the browser.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { createService, removeSwarmObjects } from './harness/swarm-services.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';
import { buildWebAssets } from './harness/web-assets.ts';
import { buildWidgetHost, openWidgetHost, showWidget } from './harness/widget-host.ts';

const SERVICES = ['ww-web'];
const CONTAINERS = ['ww-ticker', 'ww-exit3'];

describe('MCP Apps widgets in Chromium, inside a host built on ext-apps, fed by a real broker', () => {
  let assets: { dir: string; remove(): void };
  let hostScript: string;
  let fleet: TestFleet;
  let docker: Docker;
  let client: Client;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let widgetCalls: string[];
  let widgetMessages: string[];

  /** The widget document a tool declares, read as a host reads it: tools/list, then resources/read. */
  async function widgetOf(tool: string): Promise<string> {
    const listed = (await client.listTools()).tools.find((t) => t.name === tool);
    const uri = (listed?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;
    expect(uri).toMatch(/^ui:\/\/fleetmesh\//);
    const content = (await client.readResource({ uri: uri ?? '' })).contents[0] as { mimeType: string; text: string };
    expect(content.mimeType).toBe('text/html;profile=mcp-app');
    // A host loads the whole document before the widget shows anything: each stays under 150 KB.
    expect(Buffer.byteLength(content.text)).toBeLessThan(150 * 1024);
    return content.text;
  }

  async function render(tool: string, args: Record<string, unknown>) {
    const result = await call(client, tool, args);
    return showWidget(page, await widgetOf(tool), args, result);
  }

  beforeAll(async () => {
    docker = testDocker();
    await removeSwarmObjects(docker, { services: SERVICES });
    await removeContainers(docker, CONTAINERS);
    [assets, hostScript] = await Promise.all([buildWebAssets(), buildWidgetHost()]);
    await createService(docker, { name: 'ww-web', replicas: 2, command: ['sh', '-c', 'while true; do echo "ww-web alive"; sleep 1; done'] });
    await runContainer(docker, { name: 'ww-exit3', command: ['sh', '-c', 'exit 3'] });
    await runContainer(docker, {
      name: 'ww-ticker',
      command: ['sh', '-c', 'i=0; while true; do echo "tick $i"; echo "tock $i" >&2; i=$((i+1)); sleep 0.3; done'],
    });
    fleet = await startTestFleet({ operationsLevel: 3, webAssetsDir: assets.dir });
    await fleet.addAgent('ww-manager', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      domainFlags: { 'swarm-name': 'widget-swarm' },
      token: await fleet.token({ roles: ['swarm-manager'] }),
    });
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    problems = watchProblems(page);
    ({ calls: widgetCalls, messages: widgetMessages } = await openWidgetHost(page, hostScript, client));
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

  it('shows system_status as a fleet table that keeps a host that did not answer, with its error, and narrows to what is typed', async () => {
    const gone = await fleet.addAgent('ww-gone', { collectors: 'default', dockerAddress: inject('dockerHost') });
    await fleet.stopAgent(gone);
    const frame = await render('system_status', {});
    await frame.waitForSelector('tr[data-key^="ww-manager"] td[data-status="online"]');
    const goneRow = await frame.textContent('tr[data-key^="ww-gone"]');
    expect(goneRow).toMatch(/unavailable/);
    expect(goneRow).toMatch(/agent_(offline|disconnected): \S/);
    await screenshot(page, 'widget-fleet-table');
    await frame.fill('input.table-search', 'ww-gone');
    await frame.waitForFunction(
      () => document.querySelectorAll('tbody tr').length === 1 && document.querySelector('tbody tr')?.getAttribute('data-key')?.startsWith('ww-gone'),
    );
  });

  it('shows docker_list with each container’s status, exit code, restarts and ports', async () => {
    await waitFor(async () => JSON.stringify((await call(client, 'docker_list', { host: 'ww-manager' })).structuredContent).includes('ww-exit3'), {
      what: 'ww-exit3 listed',
    });
    const frame = await render('docker_list', { host: 'ww-manager' });
    const cells = await frame.$$eval('tr[data-key="ww-manager/ww-exit3"] td', (tds) => tds.map((td) => td.textContent));
    expect(cells).toContain('3');
    expect(cells.some((cell) => /^Exited \(3\)/.test(cell ?? ''))).toBe(true);
    const headers = await frame.$$eval('th', (ths) => ths.map((th) => th.textContent?.replace(/[▴▾]/g, '').trim()));
    expect(headers).toEqual(expect.arrayContaining(['status', 'exit code', 'restarts', 'started', 'ports']));
    // Across the fleet, a host that did not answer keeps a row with its error instead of vanishing.
    const fleetWide = await render('docker_list', {});
    expect(await fleetWide.textContent('tr[data-key^="ww-gone/"]')).toMatch(/failed.*agent_(offline|disconnected)/);
  });

  it('shows find results grouped by type, narrowed as typed, and describes one on a click through the host', async () => {
    await waitFor(async () => Number((await call(client, 'find', { query: 'ww-' })).structuredContent.total) >= 2, { timeoutMs: 60_000, what: 'ww- indexed' });
    const frame = await render('find', { query: 'ww-' });
    await frame.waitForSelector('.find-group[data-type="container"] .find-row[data-name="ww-ticker"]');
    await frame.fill('input.table-search', 'ticker');
    await frame.waitForFunction(() => document.querySelectorAll('.find-row').length === 1);
    await frame.click('.find-row[data-name="ww-ticker"] button');
    await frame.waitForSelector('.find-detail h3:has-text("container ww-ticker")');
    expect(widgetCalls).toContain('describe');
    await screenshot(page, 'widget-find-results');
  });

  it('shows get_metrics as a chart with data points', async () => {
    const args = { target: 'host', id: 'ww-manager', metric: 'cpu', range: '1h' };
    await waitFor(async () => ((await call(client, 'get_metrics', args)).structuredContent.series as { points: unknown[] }[])[0]?.points.length, {
      what: 'a first metrics sample',
    });
    const frame = await render('get_metrics', args);
    await frame.waitForFunction(() => Number(document.querySelector('.metrics-chart')?.getAttribute('data-points')) > 0);
    await frame.waitForSelector('.metrics-chart canvas');
    await frame.click('button:has-text("memory")');
    await frame.waitForSelector('button.selected:has-text("memory")');
    await frame.waitForFunction(() => Number(document.querySelector('.metrics-chart')?.getAttribute('data-points')) > 0);
    expect(widgetCalls).toContain('get_metrics');
    await screenshot(page, 'widget-metrics-chart');
  });

  it("shows get_topology as the swarm's nodes and services", async () => {
    await waitFor(async () => (await call(client, 'find', { type: 'service', query: 'ww-web' })).structuredContent.total === 1, {
      timeoutMs: 60_000,
      what: 'ww-web indexed',
    });
    const frame = await render('get_topology', { view: 'placement' });
    await frame.waitForSelector('g[data-type="service"][data-name="ww-web"]');
    await frame.waitForSelector('g[data-type="node"]');
    await screenshot(page, 'widget-swarm-topology');
    // Zoom changes what the picture shows; a view switch asks the swarm again through the host.
    const viewBox = () => frame.getAttribute('.swarm-topology svg', 'viewBox');
    const before = await viewBox();
    await frame.click('button[aria-label="zoom in"]');
    expect(await viewBox()).not.toBe(before);
    const calls = widgetCalls.filter((name) => name === 'get_topology').length;
    await frame.click('button[data-view="network"]');
    await frame.waitForSelector('button[data-view="network"][aria-pressed="true"]');
    await frame.waitForSelector('.topology-caption:has-text("network:")');
    expect(widgetCalls.filter((name) => name === 'get_topology').length).toBe(calls + 1);
  });

  it('shows docker_logs in a log viewer that follows new lines through the host', async () => {
    const frame = await render('docker_logs', { host: 'ww-manager', name: 'ww-ticker', timestamps: true, lines: 20 });
    await frame.waitForSelector('.log-line.stdout:has-text("tick")');
    // It opens at the newest lines, each saying the host it came from.
    expect(
      await frame.$eval('.log-lines', (list) => list.scrollHeight <= list.clientHeight || list.scrollTop + list.clientHeight >= list.scrollHeight - 20),
    ).toBe(true);
    expect(await frame.textContent('.log-line .log-source')).toBe('ww-manager');
    await frame.waitForSelector('.log-line.stderr:has-text("tock")');
    const newest = () =>
      frame.evaluate(() =>
        Math.max(...[...document.querySelectorAll('.log-line.stdout .log-text')].map((e) => Number(/tick (\d+)/.exec(e.textContent ?? '')?.[1] ?? -1))),
      );
    const first = await newest();
    await frame.waitForFunction(
      (seen) => [...document.querySelectorAll('.log-line.stdout .log-text')].some((e) => Number(/tick (\d+)/.exec(e.textContent ?? '')?.[1]) > seen + 3),
      first,
      { timeout: 30_000 },
    );
    expect(widgetCalls).toContain('docker_logs');
    await screenshot(page, 'widget-log-viewer');
  });

  it('shows get_recommendations with the tool that fixes each finding', async () => {
    await waitFor(async () => ((await call(client, 'get_recommendations', {})).structuredContent.findings as unknown[]).length > 0, {
      timeoutMs: 60_000,
      what: 'a recommendation for ww-web',
    });
    const frame = await render('get_recommendations', {});
    await frame.waitForSelector('.finding .fix code');
    await screenshot(page, 'widget-recommendations');
    // Choosing a finding puts the request to fix it, with its target and tool, into the conversation.
    await frame.click('.finding:has(.fix) button.choose-fix');
    await frame.waitForSelector('button.choose-fix:has-text("Sent to the conversation")');
    expect(widgetMessages).toHaveLength(1);
    expect(widgetMessages[0]).toMatch(/^Fix the (critical|warning|info) .+ finding on \S+ \S+.*Use \w+/);
    expect(problems).toEqual([]);
  });
});

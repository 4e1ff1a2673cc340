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
const CONTAINERS = ['ww-ticker'];

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

  /** The widget document a tool declares, read as a host reads it: tools/list, then resources/read. */
  async function widgetOf(tool: string): Promise<string> {
    const listed = (await client.listTools()).tools.find((t) => t.name === tool);
    const uri = (listed?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;
    expect(uri).toMatch(/^ui:\/\/fleetmesh\//);
    const content = (await client.readResource({ uri: uri ?? '' })).contents[0] as { mimeType: string; text: string };
    expect(content.mimeType).toBe('text/html;profile=mcp-app');
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
    widgetCalls = (await openWidgetHost(page, hostScript, client)).calls;
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

  it('shows system_status as a fleet table', async () => {
    const frame = await render('system_status', {});
    await frame.waitForSelector('tr[data-key^="ww-manager"] td[data-status="online"]');
    await screenshot(page, 'widget-fleet-table');
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
  });

  it('shows docker_logs in a log viewer that follows new lines through the host', async () => {
    const frame = await render('docker_logs', { host: 'ww-manager', name: 'ww-ticker', timestamps: true, lines: 20 });
    await frame.waitForSelector('.log-line.stdout:has-text("tick")');
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
    expect(problems).toEqual([]);
  });
});

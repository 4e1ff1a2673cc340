import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema, GetTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolGlobSet } from '../broker/auth/tool-filter.ts';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { runFleetmesh } from './harness/cli-process.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';
import { buildWebAssets } from './harness/web-assets.ts';

interface ListedApproval {
  id: string;
  identity: string;
  tool: string;
  targets: string[];
  arguments: Record<string, unknown>;
  state: string;
  decidedBy: string | null;
}

describe('a second person for impactful calls: MCP callers wait while the CLI or the console decides', () => {
  let fleet: TestFleet;
  let assets: { dir: string; remove(): void };
  let dataDir: string;
  let alice: Client;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let bobToken: string;

  /** The approvals waiting now, as `fleetmesh approvals list` prints them from another process. */
  const listed = async (all = false): Promise<ListedApproval[]> => {
    const run = await runFleetmesh(['approvals', 'list', '--output', 'json', '--data-dir', dataDir, ...(all ? ['--all'] : [])]);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as ListedApproval[];
  };
  /** The approval a call with these labels waits for, once the broker stored it. */
  const waitingFor = (labels: Record<string, string>) =>
    waitFor(
      async () =>
        (await fleet.broker.store.approvals.list({ pending: true, limit: 50, now: Date.now() })).find(
          (row) => JSON.stringify(row.arguments.labels) === JSON.stringify(labels),
        ),
      { what: `an approval for ${JSON.stringify(labels)}` },
    );

  beforeAll(async () => {
    assets = await buildWebAssets();
    fleet = await startTestFleet({
      operationsLevel: 3,
      webListen: '127.0.0.1:0',
      webAssetsDir: assets.dir,
      approvals: { level: 2, tools: new ToolGlobSet([]), ttlMs: 120_000 },
    });
    dataDir = join(fleet.root, 'broker');
    await fleet.addAgent('ap-web-1');
    alice = await mcpClient(fleet.broker, await identityToken(fleet.broker, 2, ['host:ap-*=write'], 'ap-alice'));
    bobToken = await identityToken(fleet.broker, 2, ['host:*'], 'ap-bob');
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    problems = watchProblems(page);
  });

  afterAll(async () => {
    await alice?.close();
    await browser?.close();
    await fleet?.stop();
    assets?.remove();
  });

  it('holds a call until fleetmesh approvals approve, run by another process, lets it run, and audits both people', async () => {
    const labels = { tier: 'front' };
    const pending = call(alice, 'set_agent_labels', { host: 'ap-web-1', labels });
    const waiting = await waitingFor(labels);
    expect((await listed()).find((row) => row.id === waiting.id)).toMatchObject({
      identity: 'ap-alice',
      tool: 'set_agent_labels',
      targets: [expect.stringContaining('ap-web-1')],
      state: 'pending',
    });
    const text = await runFleetmesh(['approvals', 'list', '--data-dir', dataDir]);
    expect(text.stdout).toContain(waiting.id);
    expect(text.stdout).toContain('ap-alice');
    expect(text.stdout).toContain('"tier":"front"');

    // The operator may not pass the call off as its own caller's approval.
    const self = await runFleetmesh(['approvals', 'approve', waiting.id, '--as', 'ap-alice', '--data-dir', dataDir]);
    expect(self.code).not.toBe(0);
    expect(self.stderr).toContain('another person must decide it');

    const approved = await runFleetmesh(['approvals', 'approve', waiting.id, '--as', 'ap-carol', '--reason', 'change 42', '--data-dir', dataDir]);
    expect(approved.code, approved.stderr).toBe(0);
    const result = await pending;
    expect(result.isError).toBeFalsy();
    const rows = await fleet.broker.store.audit.recent({ limit: 10 });
    expect(rows.find((row) => row.tool === 'set_agent_labels')).toMatchObject({ identity: 'ap-alice', outcome: 'ok', approvedBy: 'ap-carol' });
    expect(rows.find((row) => row.tool === 'approvals approve')).toMatchObject({
      identity: 'ap-carol',
      arguments: { approval: waiting.id, caller: 'ap-alice', reason: 'change 42' },
    });
    expect((await listed(true)).find((row) => row.id === waiting.id)).toMatchObject({ state: 'approved', decidedBy: 'ap-carol' });
  });

  it('fails a denied call as forbidden, saying who denied it and why, with nothing changed', async () => {
    const labels = { tier: 'denied' };
    const pending = call(alice, 'set_agent_labels', { host: 'ap-web-1', labels });
    const waiting = await waitingFor(labels);
    const denied = await runFleetmesh(['approvals', 'deny', waiting.id, '--as', 'ap-carol', '--reason', 'not in the window', '--data-dir', dataDir]);
    expect(denied.code, denied.stderr).toBe(0);
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      error: { code: 'forbidden', message: expect.stringContaining('denied by ap-carol: not in the window') },
    });
    const info = await call(alice, 'agent_info', { host: 'ap-web-1' });
    expect(JSON.stringify(info.structuredContent)).not.toContain('denied');
  });

  it("keeps an MCP task working, as input_required with what it waits for, until someone approves it on the console's page", async () => {
    const labels = { tier: 'task' };
    const { task } = await alice.request(
      { method: 'tools/call', params: { name: 'set_agent_labels', arguments: { host: 'ap-web-1', labels }, task: { ttl: 120_000 } } },
      CreateTaskResultSchema,
    );
    const waiting = await waitingFor(labels);
    let status = await alice.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema);
    await waitFor(async () => {
      status = await alice.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema);
      return status.status === 'input_required';
    });
    expect(status.statusMessage).toContain(waiting.id);

    await page.goto(fleet.broker.web?.url ?? '');
    await page.fill('input[name=token]', bobToken);
    await page.click('button[type=submit]');
    await page.waitForSelector('nav .who:has-text("ap-bob")');
    await page.click('nav a:has-text("Approvals")');
    const card = page.locator(`article[data-approval="${waiting.id}"]`);
    await card.waitFor();
    expect(await card.locator('h2').textContent()).toBe('set_agent_labels by ap-alice');
    expect(await card.locator('.targets').textContent()).toContain('ap-web-1');
    expect(await card.locator('.arguments').textContent()).toContain('"tier":"task"');
    await screenshot(page, 'console-approvals');
    await card.locator('input[name=reason]').fill('looks right');
    await card.locator('button:has-text("Approve")').click();
    await page.waitForSelector('.notice.ok:has-text("approved")');
    await page.waitForSelector('text=No call waits for approval.');

    await waitFor(async () => {
      status = await alice.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema);
      return status.status === 'completed';
    });
    const rows = await fleet.broker.store.audit.recent({ limit: 10 });
    expect(rows.find((row) => row.tool === 'set_agent_labels')).toMatchObject({ identity: 'ap-alice', outcome: 'ok', approvedBy: 'ap-bob' });
    expect(rows.find((row) => row.tool === 'approvals approve')).toMatchObject({
      identity: 'ap-bob',
      arguments: { approval: waiting.id, reason: 'looks right' },
    });
    expect(problems).toEqual([]);
  });

  it('shows the caller its own waiting call on the console without Approve, and lets a read through without waiting', async () => {
    const labels = { tier: 'own' };
    const aliceToken = await identityToken(fleet.broker, 2, ['host:ap-*=write'], 'ap-alice-console');
    const aliceClient = await mcpClient(fleet.broker, aliceToken);
    try {
      expect((await call(aliceClient, 'agent_info', { host: 'ap-web-1' })).isError).toBeFalsy();
      const pending = call(aliceClient, 'set_agent_labels', { host: 'ap-web-1', labels });
      const waiting = await waitingFor(labels);
      const own = await (await browser.newContext()).newPage();
      await own.goto(`${fleet.broker.web?.url ?? ''}`);
      await own.fill('input[name=token]', aliceToken);
      await own.click('button[type=submit]');
      await own.waitForSelector('nav .who:has-text("ap-alice-console")');
      await own.click('nav a:has-text("Approvals")');
      const card = own.locator(`article[data-approval="${waiting.id}"]`);
      await card.waitFor();
      expect(await card.locator('button').count()).toBe(0);
      await own.close();
      await runFleetmesh(['approvals', 'deny', waiting.id, '--as', 'ap-carol', '--data-dir', dataDir]);
      expect((await pending).isError).toBe(true);
    } finally {
      await aliceClient.close();
    }
  });
});

/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Functions passed to page.evaluate and waitForFunction run in the browser.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { identityToken } from './harness/mcp-client.ts';
import { type SystemdHost, startSystemdHost } from './harness/systemd-host.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { buildWebAssets } from './harness/web-assets.ts';

/** A line a program on the host writes to its journal: markup, shown as the text it is. */
const MARKUP = '<b id="wh-injected">bold</b>';

describe("a host's services, journal and packages in the console, from systemd as PID 1", () => {
  let assets: { dir: string; remove(): void };
  let fleet: TestFleet;
  let host: SystemdHost;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let consoleUrl: string;

  beforeAll(async () => {
    assets = await buildWebAssets();
    host = await startSystemdHost({
      name: 'fm-console-systemd',
      files: [{ path: 'usr/local/lib/wh-web.sh', content: Buffer.from(`while true; do echo 'wh tick'; echo '${MARKUP}'; sleep 1; done\n`) }],
      units: [
        { name: 'wh-web.service', atBoot: true, text: '[Unit]\nDescription=console test web\n[Service]\nExecStart=/bin/sh /usr/local/lib/wh-web.sh\n' },
        {
          name: 'wh-broken.service',
          atBoot: true,
          text: "[Unit]\nDescription=console test broken\n[Service]\nType=oneshot\nExecStart=/bin/sh -c 'exit 3'\n",
        },
      ],
    });
    fleet = await startTestFleet({ operationsLevel: 3, webListen: '127.0.0.1:0', webAssetsDir: assets.dir });
    // The agent as a container runs it: the host's journal, bus and root file system mounted in.
    await fleet.addAgent('wh-host', {
      collectors: 'default',
      domainFlags: { 'journal-dir': host.journalDir, 'system-bus': host.busSocket, 'host-root': host.root },
    });
    consoleUrl = fleet.broker.web?.url ?? '';
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    problems = watchProblems(page);
    await page.goto(consoleUrl);
    await page.fill('input[name=token]', await identityToken(fleet.broker, 3, undefined, 'host-ops-admin'));
    await page.click('button[type=submit]');
    await page.waitForSelector('nav .who:has-text("host-ops-admin")');
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await fleet?.stop();
    await host?.stop();
    assets?.remove();
  });

  it("lists the host's services with their state, and a unit's journal newest first, its lines as text", async () => {
    await page.goto(`${consoleUrl}#/host/wh-host`);
    await page.click('.host-pages a:has-text("Services and journal")');
    await page.waitForSelector('.page.units tr[data-key="wh-web.service"] td[data-status="online"]');
    await page.waitForSelector('.page.units tr[data-key="wh-broken.service"] td[data-status="critical"]');
    // The whole journal first, then the unit's once it is picked.
    await page.waitForSelector('.page.units .journal-lines .log-line');
    await page.click('.page.units tr[data-key="wh-web.service"]');
    await page.waitForSelector('.page.units h2:has-text("Journal of wh-web.service")');
    await page.waitForSelector('.page.units .journal-lines .log-text:text-is("wh tick")');
    const times = await page.$$eval('.page.units .journal-lines time', (lines) => lines.map((l) => Date.parse(l.getAttribute('datetime') ?? '')));
    expect(times.length).toBeGreaterThan(1);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // What the program wrote is shown as the text it is, never as markup.
    await page.waitForSelector(`.page.units .journal-lines .log-text:text-is('${MARKUP}')`);
    expect(await page.locator('#wh-injected').count()).toBe(0);
    await screenshot(page, 'console-units-systemd');
  });

  it("lists the host's installed packages from its own dpkg database, and why it cannot say which have updates", async () => {
    await page.goto(`${consoleUrl}#/packages/wh-host`);
    await page.waitForSelector('.page.packages tr[data-key^="systemd:"]');
    expect(await page.textContent('.page.packages')).toMatch(/\d+ installed \(dpkg\)/);
    // The host has never fetched apt's index files: the page says so rather than call it up to date.
    await page.waitForSelector('.page.packages .status-warning:has-text("no apt index files")');
    expect(await page.locator('.page.packages td:has-text("No pending updates")').isVisible()).toBe(false);
    await screenshot(page, 'console-packages-systemd');
    expect(problems.filter((p) => !/Failed to load resource/.test(p))).toEqual([]);
  });
});

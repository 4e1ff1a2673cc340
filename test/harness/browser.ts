import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (scripts/test-packages.sh installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** Screenshots of every page and widget a browser test opens: git-ignored test artifacts. */
export const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots');

/** Headless Chromium as CI runs it: no sandbox (containers run as root), no GPU, nothing phoning home. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Collects what a page should never produce: uncaught errors and console
 * errors (a Content-Security-Policy violation is one). A test ends with
 * `expect(problems).toEqual([])`.
 */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  // The pages recover from a request that got no answer; which one it was is worth seeing in the test's output.
  page.on('requestfailed', (request) => console.warn(`request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium drops a request in flight when the machine's network interfaces change (other tests of the run
    // make network namespaces and engine networks): no fault of the page, which recovers as from any failed request.
    if (/net::ERR_NETWORK_CHANGED/.test(message.text())) {
      console.warn(`ignored: ${message.text()}`);
      return;
    }
    problems.push(`console error: ${message.text()}`);
  });
  return problems;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

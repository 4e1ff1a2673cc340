import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Frame, Page } from 'playwright-core';
import { build } from 'vite';
import { makeTempDir } from './temp-dir.ts';

/** The test host page's script (widget-host/host-page.ts), bundled with the ext-apps host side. */
export async function buildWidgetHost(): Promise<string> {
  const temp = makeTempDir();
  try {
    await build({
      configFile: false,
      logLevel: 'error',
      build: {
        outDir: temp.path,
        minify: false,
        lib: { entry: join(import.meta.dirname, 'widget-host', 'host-page.ts'), formats: ['es'], fileName: () => 'host.js' },
      },
    });
    return readFileSync(join(temp.path, 'host.js'), 'utf8');
  } finally {
    temp.remove();
  }
}

/**
 * A Chromium page acting as an MCP Apps host: tool calls from widgets go to the
 * given MCP client (a real broker). `calls` lists the tools widgets called,
 * `messages` the text widgets put into the conversation (`ui/message`).
 */
export async function openWidgetHost(page: Page, hostScript: string, client: Client): Promise<{ calls: string[]; messages: string[] }> {
  const calls: string[] = [];
  const messages: string[] = [];
  await page.exposeFunction('hostMessage', async (text: string) => {
    messages.push(text);
  });
  await page.exposeFunction('hostCallTool', async (params: { name: string; arguments: Record<string, unknown> }) => {
    calls.push(params.name);
    return client.callTool({ name: params.name, arguments: params.arguments });
  });
  await page.setContent('<!doctype html><html><head><title>MCP Apps test host</title></head><body></body></html>');
  await page.addScriptTag({ content: hostScript, type: 'module' });
  await page.waitForFunction(() => 'showWidget' in window);
  return { calls, messages };
}

/** Shows a widget document with a tool call's arguments and result; resolves with the widget's frame once it rendered. */
export async function showWidget(page: Page, html: string, args: Record<string, unknown>, result: unknown): Promise<Frame> {
  await page.evaluate(([h, a, r]) => (window as unknown as { showWidget(h: unknown, a: unknown, r: unknown): Promise<void> }).showWidget(h, a, r), [
    html,
    args,
    result,
  ] as const);
  const frame = page
    .frames()
    .filter((f) => f !== page.mainFrame() && !f.isDetached())
    .at(-1);
  if (!frame) throw new Error('no widget frame');
  await frame.waitForSelector('#app[data-rendered="true"]');
  return frame;
}

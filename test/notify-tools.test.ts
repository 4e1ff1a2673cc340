import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveNotifyOptions } from '../broker/domains/notify/notify-options.ts';
import { NOTIFY_FLAGS } from '../shared/domains/notify/notify-flags.ts';
import { HttpReceiver } from './harness/http-receiver.ts';
import { call, identityToken, mcpClient, text } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

interface Delivery {
  channel: string;
  origin: string;
  ok: boolean;
  status: number | null;
  error?: string;
}

describe('notifications from the broker to every channel kind', () => {
  let receiver: HttpReceiver;
  let fleet: TestFleet;
  let client: Client;
  const temp = makeTempDir();

  beforeAll(async () => {
    receiver = await HttpReceiver.start();
    const secret = (name: string, value: string) => {
      const file = join(temp.path, name);
      writeFileSync(file, `${value}\n`);
      return file;
    };
    // The channels as an operator configures them: flags with a base URL each, tokens in files.
    const notify = resolveNotifyOptions({
      'notify-webhook': `${receiver.url}/webhook`,
      'notify-ntfy': `${receiver.url}/ntfy/fleet-alerts`,
      'notify-ntfy-token-file': secret('ntfy', 'tk_ntfy'),
      'notify-gotify': `${receiver.url}/gotify`,
      'notify-gotify-token-file': secret('gotify', 'AgotifyToken'),
      'notify-slack': `${receiver.url}/slack/services/T0/B0/XYZ`,
      'notify-discord': `${receiver.url}/discord/api/webhooks/1/abc`,
      'notify-telegram': `${receiver.url}/telegram`,
      'notify-telegram-token-file': secret('telegram', '123:bot-secret'),
      'notify-telegram-chat': '-1001',
      'notify-offline-after': 300,
      'notify-repeat-after': 60_000,
    });
    fleet = await startTestFleet({ operationsLevel: 3, services: { notify } });
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1));
  });
  afterAll(async () => {
    await client?.close();
    await fleet?.stop();
    await receiver?.stop();
    temp.remove();
  });

  it('notify_test sends one message through each channel in its own format and reports each result', async () => {
    const result = await call(client, 'notify_test', { message: 'hello from the test' });
    expect(result.isError).toBeFalsy();
    const channels = result.structuredContent.channels as Delivery[];
    expect(channels.map((c) => c.channel)).toEqual(['webhook', 'ntfy', 'gotify', 'slack', 'discord', 'telegram']);
    expect(channels.every((c) => c.ok && c.status === 200 && c.origin === receiver.url)).toBe(true);
    expect(result.structuredContent).toMatchObject({ sent: 6, failed: 0 });
    // The results name where each channel is, never its path (a webhook's path is its secret).
    expect(JSON.stringify(result.structuredContent)).not.toMatch(/XYZ|abc|bot-secret/);

    const at = (prefix: string) => receiver.requests.find((r) => r.path.startsWith(prefix));
    expect(JSON.parse(at('/webhook')?.body ?? '{}')).toMatchObject({ event: 'test', text: 'hello from the test' });
    expect(at('/ntfy/fleet-alerts')).toMatchObject({
      body: 'hello from the test',
      headers: { title: 'fleetmesh: test notification', authorization: 'Bearer tk_ntfy' },
    });
    expect(at('/gotify/message')?.headers['x-gotify-key']).toBe('AgotifyToken');
    expect(JSON.parse(at('/gotify/message')?.body ?? '{}')).toMatchObject({ title: 'fleetmesh: test notification', message: 'hello from the test' });
    expect(JSON.parse(at('/slack/services/T0/B0/XYZ')?.body ?? '{}').text).toContain('hello from the test');
    expect(JSON.parse(at('/discord/api/webhooks/1/abc')?.body ?? '{}').content).toContain('hello from the test');
    expect(JSON.parse(at('/telegram/bot123:bot-secret/sendMessage')?.body ?? '{}')).toMatchObject({ chat_id: '-1001' });
  });

  it('reports a channel that refuses and still sends through the others', async () => {
    receiver.answer('/discord/api/webhooks/1/abc', 500);
    const result = await call(client, 'notify_test', {});
    const channels = Object.fromEntries((result.structuredContent.channels as Delivery[]).map((c) => [c.channel, c]));
    expect(channels.discord).toMatchObject({ ok: false, status: 500, error: 'the channel answered HTTP 500' });
    expect(channels.slack).toMatchObject({ ok: true, status: 200 });
    expect(result.structuredContent).toMatchObject({ sent: 5, failed: 1 });
    expect(text(result)).toContain('HTTP 500');
    receiver.answer('/discord/api/webhooks/1/abc', 200);
  });

  it('notifies once when an agent stays offline past the threshold, and when it is back', async () => {
    const agent = await fleet.addAgent('short-lived');
    await fleet.stopAgent(agent);
    const offline = await receiver.next((r) => r.path === '/webhook' && JSON.parse(r.body).event === 'offline' && JSON.parse(r.body).severity === 'critical');
    expect(JSON.parse(offline.body)).toMatchObject({ host: 'short-lived', title: 'fleetmesh: agent short-lived is offline' });
    await fleet.addAgent('short-lived');
    const back = await receiver.next((r) => r.path === '/webhook' && JSON.parse(r.body).title === 'fleetmesh: agent short-lived is back online');
    expect(JSON.parse(back.body).severity).toBe('info');
    expect(receiver.requests.filter((r) => r.path === '/webhook' && JSON.parse(r.body).title === 'fleetmesh: agent short-lived is offline')).toHaveLength(1);
  });

  it('notifies an alert crossing an agent reports, once per host, figure and state', async () => {
    // A memory threshold of 1% is crossed at the first sample.
    await fleet.addAgent('hot', { collectors: 'default', alertThresholds: { cpu: 100, memory: 1, disk: 100 }, sampleIntervalMs: 200 });
    // CPU and disks may cross too on a busy machine: this looks for the memory one.
    const alert = await receiver.next((r) => r.path === '/webhook' && JSON.parse(r.body).event === 'alert' && JSON.parse(r.body).details.metric === 'memory');
    expect(JSON.parse(alert.body)).toMatchObject({ host: 'hot', severity: 'critical', details: { metric: 'memory', state: 'critical', threshold_percent: 1 } });
    await waitFor(() => receiver.requests.some((r) => r.path.startsWith('/slack') && r.body.includes('memory critical on hot')), {
      what: 'the alert on slack',
    });
    expect(receiver.requests.filter((r) => r.path === '/webhook' && r.body.includes('"metric":"memory"'))).toHaveLength(1);
  });

  it('refuses a telegram channel without its token', () => {
    const unset = Object.fromEntries(Object.keys(NOTIFY_FLAGS).map((flag) => [flag, undefined])) as unknown as Parameters<typeof resolveNotifyOptions>[0];
    expect(() =>
      resolveNotifyOptions({ ...unset, 'notify-telegram': 'https://api.telegram.org', 'notify-offline-after': 1000, 'notify-repeat-after': 0 }),
    ).toThrow(/--notify-telegram needs --notify-telegram-token-file/);
  });
});

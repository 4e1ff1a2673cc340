import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import type { Incident } from '../shared/domains/watch/watch-incident.ts';
import { CliProcess } from './harness/cli-process.ts';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { HttpReceiver } from './harness/http-receiver.ts';
import { call, identityToken, mcpClient, text } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const CRASHY = 'fm-watch-crashy';
const STEADY = 'fm-watch-steady';

interface WatchRow {
  container: string;
  runner: string;
  status: string;
  reason?: string;
  incidents: number;
}

describe('watching containers for restarts on a real engine', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let client: Client;
  let webhook: HttpReceiver;
  let watcher: Agent;
  const processes: CliProcess[] = [];

  beforeAll(async () => {
    docker = testDocker();
    await removeContainers(docker, [CRASHY, STEADY]);
    webhook = await HttpReceiver.start();
    fleet = await startTestFleet({
      operationsLevel: 3,
      services: { notify: { channels: [{ kind: 'webhook', url: `${webhook.url}/hook` }], offlineAfterMs: 60_000, repeatAfterMs: 60_000 } },
    });
    watcher = await fleet.addAgent('watcher', { collectors: 'default', dockerAddress: inject('dockerHost') });
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    await runContainer(docker, { name: STEADY, command: ['sleep', '3600'] });
    // Created stopped, so the watch starts before its first run: every start after the first is a restart.
    await runContainer(docker, {
      name: CRASHY,
      command: ['sh', '-c', 'echo "run begins"; sleep 1; echo "cannot open database" >&2; exit 3'],
      restart: { Name: 'on-failure', MaximumRetryCount: 4 },
      start: false,
    });
  });
  afterAll(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await client?.close();
    await fleet?.stop();
    await webhook?.stop();
    await removeContainers(docker, [CRASHY, STEADY]);
  });

  it('turns a crash and restart into an incident with logs and a crash analysis, and notifies the webhook once', async () => {
    for (const container of [CRASHY, STEADY]) {
      const added = await call(client, 'watch_add', { host: 'watcher', container });
      expect(added.structuredContent).toMatchObject({ container, runner: 'docker', added: true });
    }
    const systemd = await call(client, 'watch_add', { server: 'watcher', container: 'nginx.service', runner: 'systemd' });
    expect(systemd.structuredContent).toMatchObject({ runner: 'systemd', added: true, watching: 3 });
    await docker.getContainer(CRASHY).start();

    const hook = await webhook.next((request) => request.path === '/hook' && JSON.parse(request.body).event === 'incident');
    const notification = JSON.parse(hook.body) as { host: string; title: string; text: string; details: Incident };
    expect(notification.host).toBe('watcher');
    expect(notification.title).toContain(CRASHY);
    expect(notification.details).toMatchObject({ container: CRASHY, exit_code: 3, oom_killed: false, restart_count: 1 });
    expect(notification.details.previous_start_unix_ms).toBeLessThan(notification.details.current_start_unix_ms);
    expect(notification.details.logs_before.map((line) => line.text)).toEqual(['run begins', 'cannot open database']);
    expect(notification.details.logs_before[1]?.stream).toBe('stderr');
    expect(notification.details.logs_after.map((line) => line.text)).toContain('run begins');
    expect(notification.details.analysis).toMatch(/exited with code 3/);

    // The container keeps crashing: the agent records every restart, flapping from the third, the broker notifies once.
    const history = await waitFor(
      async () => {
        const result = await call(client, 'watch_history', { host: 'watcher', container: CRASHY });
        const incidents = result.structuredContent.incidents as Incident[];
        return incidents.length >= 3 ? incidents : undefined;
      },
      { what: 'three incidents', timeoutMs: 30_000 },
    );
    expect(history[0]?.flapping).toBe(true);
    expect(history[0]?.analysis).toMatch(/flapping/);
    expect(history[0]?.restart_count).toBeGreaterThan(history[2]?.restart_count ?? Infinity);
    expect(webhook.requests.filter((r) => JSON.parse(r.body).event === 'incident')).toHaveLength(1);

    const listed = await call(client, 'watch_list', { host: 'watcher' });
    const rows = Object.fromEntries((listed.structuredContent.watches as WatchRow[]).map((row) => [row.container, row]));
    expect(rows[STEADY]).toMatchObject({ status: 'healthy', incidents: 0 });
    expect(['restarted', 'down']).toContain(rows[CRASHY]?.status);
    expect(rows['nginx.service']).toMatchObject({ runner: 'systemd', status: 'skipped' });
    expect(rows['nginx.service']?.reason).toMatch(/cannot read systemd/);
    expect(text(listed)).toContain('skipped');
  });

  it('keeps watches and incidents across an agent restart and records a restart it missed', async () => {
    const before = (await call(client, 'watch_history', { host: 'watcher', container: CRASHY })).structuredContent.count as number;
    await fleet.stopAgent(watcher);
    await waitFor(() => fleet.broker.registry.find('watcher')?.state === 'offline', { what: 'watcher offline' });
    // Restarted while no agent watched: the agent finds out when it is back.
    await docker.getContainer(STEADY).restart({ t: 0 });
    watcher = await fleet.addAgent('watcher', { collectors: 'default', dockerAddress: inject('dockerHost') });

    const checked = await call(client, 'watch_check', { host: 'watcher' });
    const targets = Object.fromEntries((checked.structuredContent.targets as WatchRow[]).map((row) => [row.container, row]));
    expect(Object.keys(targets).sort()).toEqual([CRASHY, STEADY, 'nginx.service'].sort());
    expect(targets[STEADY]).toMatchObject({ status: 'restarted', incidents: 1 });
    const steady = (await call(client, 'watch_history', { host: 'watcher', container: STEADY })).structuredContent.incidents as Incident[];
    expect(steady).toHaveLength(1);
    expect(steady[0]).toMatchObject({ container: STEADY, restart_count: 0 });
    expect(steady[0]?.exit_code === null || steady[0]?.exit_code === 137 || steady[0]?.exit_code === 143).toBe(true);
    const after = (await call(client, 'watch_history', { host: 'watcher', container: CRASHY })).structuredContent.count as number;
    expect(after).toBeGreaterThanOrEqual(before);

    const removed = await call(client, 'watch_remove', { host: 'watcher', container: 'nginx.service' });
    expect(removed.structuredContent).toMatchObject({ removed: true, watching: 2 });
  });

  it('answers fleet-wide with the host that froze mid-call marked unavailable', async () => {
    const frozen = new CliProcess([...(await fleet.agentArgs('frozen')), '--docker-socket', inject('dockerHost')]);
    processes.push(frozen);
    await waitFor(() => fleet.broker.registry.find('frozen')?.state === 'online', { what: 'frozen online' });
    frozen.signal('SIGSTOP');
    const result = await call(client, 'watch_list', { timeout_ms: 3000 });
    const envelope = result.structuredContent as { hosts: { host: string; availability: string; errors: { code: string }[] }[] };
    const byHost = Object.fromEntries(envelope.hosts.map((node) => [node.host, node]));
    expect(byHost.watcher?.availability).toBe('available');
    // Past its deadline, or cut off by the broker once silent past the grace: either way named, not waited for.
    expect(byHost.frozen?.availability).toBe('unavailable');
    expect(['deadline_exceeded', 'agent_disconnected']).toContain(byHost.frozen?.errors[0]?.code);
    frozen.signal('SIGCONT');
  });
});

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient, text } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

interface Row {
  name: string;
  [key: string]: unknown;
}

const NAMES = ['fm-logger', 'fm-web', 'fm-crashy', 'fm-sleeper', 'fm-secret', 'fm-stubborn', 'fm-exit7'];

describe('the docker and system collectors through MCP', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let client: Client;

  beforeAll(async () => {
    docker = testDocker();
    await removeContainers(docker, NAMES);
    await runContainer(docker, {
      name: 'fm-logger',
      command: ['sh', '-c', 'i=0; while true; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); sleep 0.2; done'],
      labels: { role: 'logs' },
    });
    await runContainer(docker, { name: 'fm-web', command: ['httpd', '-f', '-p', '80'], publish: [80], labels: { role: 'web' } });
    await runContainer(docker, { name: 'fm-crashy', command: ['sh', '-c', 'echo dying; exit 3'], restart: { Name: 'on-failure', MaximumRetryCount: 3 } });
    await runContainer(docker, { name: 'fm-sleeper', command: ['sleep', '3600'] });
    await runContainer(docker, { name: 'fm-secret', command: ['sleep', '3600'], env: ['API_PASSWORD=hunter2', 'MODE=prod'] });
    fleet = await startTestFleet({ operationsLevel: 3 });
    await fleet.addAgent('engine-1', { collectors: 'default', dockerAddress: inject('dockerHost'), sampleIntervalMs: 500 });
    await fleet.addAgent('no-engine', { collectors: 'default', dockerAddress: '/nonexistent/docker.sock', sampleIntervalMs: 500 });
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
  });
  afterAll(async () => {
    await client?.close();
    await fleet?.stop();
    await removeContainers(docker, NAMES);
  });

  it('lists containers with numbers and ports, leaves out the host without an engine, and answers it unavailable when named', async () => {
    const result = await call(client, 'docker_list');
    const envelope = result.structuredContent as {
      hosts: { host: string; availability: string; containers?: Row[]; errors: { code: string; collector?: string }[] }[];
    };
    const [engine, none] = envelope.hosts;
    expect(engine?.host).toBe('engine-1');
    expect(engine?.availability).toBe('available');
    const web = engine?.containers?.find((c) => c.name === 'fm-web');
    expect(web).toMatchObject({ image: inject('testImage'), state: 'running', health: null, labels: { role: 'web' } });
    expect(web?.created_unix_ms).toBeGreaterThan(1_600_000_000_000);
    expect(web?.started_at_unix_ms).toBeGreaterThan(1_600_000_000_000);
    expect(web?.ports).toEqual(expect.arrayContaining([expect.objectContaining({ private_port: 80, protocol: 'tcp', public_port: expect.any(Number) })]));
    expect(none).toBeUndefined();
    expect((result.structuredContent as { absent_collectors?: unknown }).absent_collectors).toEqual([{ collector: 'docker', hosts: ['no-engine'] }]);
    const named = await call(client, 'docker_list', { hosts: ['engine-1', 'no-engine'] });
    const noEngine = (named.structuredContent as typeof envelope).hosts.find((node) => node.host === 'no-engine');
    expect(noEngine).toMatchObject({ host: 'no-engine', availability: 'unavailable', errors: [{ code: 'collector_unavailable', collector: 'docker' }] });

    const filtered = await call(client, 'docker_list', { host: 'engine-1', label: 'role=web' });
    expect((filtered.structuredContent.containers as Row[]).map((c) => c.name)).toEqual(['fm-web']);
    const byName = await call(client, 'docker_list', { server: 'engine-1', name: 'sleep' });
    expect((byName.structuredContent.containers as Row[]).map((c) => c.name)).toEqual(['fm-sleeper']);
  });

  it('marks a host without Docker available with docker absent (not failed), counts null not 0', async () => {
    const result = await call(client, 'system_status');
    const [engine, none] = (result.structuredContent as { hosts: Record<string, unknown>[] }).hosts;
    expect(engine).toMatchObject({ host: 'engine-1', availability: 'available', failed_collectors: [], schema_version: 1 });
    expect(engine?.containers_running).toBeGreaterThanOrEqual(3);
    expect(none).toMatchObject({ host: 'no-engine', availability: 'available', failed_collectors: [], containers_running: null, containers_total: null });
    expect(none).not.toHaveProperty('absent_collectors');
    expect(result.structuredContent.absent_collectors).toEqual([{ collector: 'docker', hosts: ['no-engine'] }]);
    expect(none?.memory).toMatchObject({ total_bytes: expect.any(Number), usage_percent: expect.any(Number) });
    const disks = engine?.disks as { mount: string; total_bytes: number }[];
    expect(disks.length).toBeGreaterThan(0);
    expect(disks.every((d) => !d.mount.includes('/overlay'))).toBe(true);
    expect(engine?.cpu).toMatchObject({ cores: expect.any(Number), load_1: expect.any(Number) });
  });

  it('gives numeric stats for every running container, cold and then warm', async () => {
    const cold = await call(client, 'docker_stats', { host: 'engine-1' });
    const rows = cold.structuredContent.containers as Row[];
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(['fm-logger', 'fm-web', 'fm-sleeper']));
    for (const row of rows) {
      for (const key of [
        'memory_usage_bytes',
        'memory_limit_bytes',
        'memory_percent',
        'net_rx_bytes',
        'net_tx_bytes',
        'block_read_bytes',
        'block_write_bytes',
        'pids',
      ]) {
        expect(typeof row[key]).toBe('number');
      }
      expect(row.cpu_percent === null || typeof row.cpu_percent === 'number').toBe(true);
    }
    const warm = await call(client, 'docker_stats', { host: 'engine-1', name: 'fm-logger' });
    expect(warm.structuredContent.containers).toEqual([
      expect.objectContaining({ name: 'fm-logger', cpu_percent: expect.any(Number), pids: expect.any(Number) }),
    ]);
  });

  it('reads logs with stdout and stderr told apart, filtered and bounded', async () => {
    await waitFor(
      async () => ((await call(client, 'docker_logs', { host: 'engine-1', name: 'fm-logger', lines: 10 })).structuredContent.count as number) >= 10,
    );
    const both = await call(client, 'docker_logs', { host: 'engine-1', name: 'fm-logger', lines: 10 });
    const lines = both.structuredContent.lines as { stream: string; text: string }[];
    expect(lines).toHaveLength(10);
    expect(lines.some((l) => l.stream === 'stdout' && /^out \d+$/.test(l.text))).toBe(true);
    expect(lines.some((l) => l.stream === 'stderr' && /^err \d+$/.test(l.text))).toBe(true);
    expect(both.structuredContent).toMatchObject({ container: 'fm-logger', truncated: false });

    const stderr = await call(client, 'docker_logs', { host: 'engine-1', name: 'fm-logger', stream: 'stderr', lines: 5, timestamps: true });
    const errLines = stderr.structuredContent.lines as { stream: string; text: string; timestamp?: string }[];
    expect(errLines.every((l) => l.stream === 'stderr' && l.text.startsWith('err ') && /^\d{4}-\d\d-\d\dT/.test(l.timestamp ?? ''))).toBe(true);

    const matching = await call(client, 'docker_logs', { host: 'engine-1', name: 'fm-logger', contains: 'ERR 1', lines: 3 });
    expect((matching.structuredContent.lines as { text: string }[]).every((l) => l.text.startsWith('err 1'))).toBe(true);

    const followed = await call(client, 'docker_logs', { host: 'engine-1', name: 'fm-logger', lines: 1, since: '1s', follow_ms: 1500, timeout_ms: 10_000 });
    expect(followed.structuredContent.count).toBe(1);
    const more = await call(client, 'docker_logs', { host: 'engine-1', name: 'fm-logger', lines: 200, since: '2s', follow_ms: 1000 });
    expect(more.structuredContent.count as number).toBeGreaterThan(5);
    expect(text(more)).toMatch(/\| stream \| text \|/);
    // Where the tail meets the followed lines, no line comes twice.
    const joined = await call(client, 'docker_logs', { host: 'engine-1', name: 'fm-logger', lines: 200, since: '3s', follow_ms: 1500, timestamps: true });
    const keys = (joined.structuredContent.lines as { stream: string; text: string; timestamp?: string }[]).map((l) => `${l.stream} ${l.timestamp} ${l.text}`);
    expect(keys.length).toBeGreaterThan(5);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('shows processes of a container and a digest that names environment variables without their values', async () => {
    const top = await call(client, 'docker_top', { host: 'engine-1', name: 'fm-sleeper' });
    expect(top.structuredContent.titles).toEqual(expect.arrayContaining(['pid']));
    expect((top.structuredContent.processes as Record<string, string>[]).some((p) => Object.values(p).some((v) => v.includes('sleep')))).toBe(true);

    const inspect = await call(client, 'docker_inspect', { host: 'engine-1', name: 'fm-secret' });
    expect(inspect.structuredContent).toMatchObject({
      name: 'fm-secret',
      image: inject('testImage'),
      state: { status: 'running', running: true },
      restart_policy: { name: 'no' },
      command: ['sleep', '3600'],
    });
    expect(inspect.structuredContent.env_names).toEqual(expect.arrayContaining(['API_PASSWORD', 'MODE', 'PATH']));
    expect(JSON.stringify(inspect.structuredContent)).not.toContain('hunter2');
    expect(text(inspect)).not.toContain('hunter2');
  });

  it('counts restarts of a crash-looping container and records its events', async () => {
    await waitFor(
      async () => {
        const list = await call(client, 'docker_list', { host: 'engine-1', name: 'fm-crashy' });
        return ((list.structuredContent.containers as Row[])[0]?.restart_count as number) >= 2;
      },
      { timeoutMs: 30_000, what: 'fm-crashy restarting' },
    );
    const events = await call(client, 'docker_events', { host: 'engine-1', name: 'fm-crashy', types: ['die'] });
    const died = events.structuredContent.events as { action: string; exit_code?: number; name: string; time_unix_ms: number }[];
    expect(died.length).toBeGreaterThanOrEqual(2);
    expect(died.every((e) => e.action === 'die' && e.exit_code === 3 && e.name === 'fm-crashy')).toBe(true);
    expect(died[0]?.time_unix_ms).toBeGreaterThanOrEqual(died[1]?.time_unix_ms ?? 0);
  });

  it("describes a container's failures and restarts from the engine's events, and tells subscribers", async () => {
    const subscriber = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const notifiedAt: number[] = [];
    const uri = 'fleet://hosts/engine-1/containers/fm-exit7';
    subscriber.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      if (notification.params.uri === uri) notifiedAt.push(Date.now());
    });
    // Started once the agent watches the engine: it fails, is restarted once by its policy, and fails again.
    await runContainer(docker, { name: 'fm-exit7', command: ['sh', '-c', 'sleep 2; exit 7'], restart: { Name: 'on-failure', MaximumRetryCount: 1 } });
    // Its resource exists once the engine's start event reached the index, seconds before its second failure.
    await waitFor(
      () =>
        subscriber.subscribeResource({ uri }).then(
          () => true,
          () => false,
        ),
      { what: `a subscription to ${uri}` },
    );
    const digest = await waitFor(
      async () => {
        const described = await call(client, 'describe', { type: 'container', id: 'fm-exit7' });
        const failures = (described.structuredContent.recent_failures ?? []) as { exit_code: number | null; node: string }[];
        return failures.length >= 2 ? described.structuredContent : undefined;
      },
      { timeoutMs: 30_000, what: 'fm-exit7 failing twice in describe' },
    );
    expect(digest.state).toBe('exited');
    expect(digest.recent_failures).toEqual([
      expect.objectContaining({ exit_code: 7, node: 'engine-1', state: 'exited' }),
      expect.objectContaining({ exit_code: 7, node: 'engine-1', state: 'exited' }),
    ]);
    // Starts after an exit the broker saw, and beside them the engine's own count (its policy retried once).
    const inspected = await docker.getContainer('fm-exit7').inspect();
    expect(digest.restarts).toEqual({ last_hour: 1, last_week: 1, engine_count: inspected.RestartCount });
    expect(inspected.RestartCount).toBe(1);
    // The last failure reached the index as an event, and the index told the subscriber after it.
    const events = await call(client, 'docker_events', { host: 'engine-1', name: 'fm-exit7', types: ['die'] });
    const lastDie = (events.structuredContent.events as { time_unix_ms: number }[])[0]?.time_unix_ms ?? Number.POSITIVE_INFINITY;
    await waitFor(() => notifiedAt.some((at) => at >= lastDie), { what: `an update of ${uri} after the last failure` });
    await subscriber.close();
  });

  it('restarts, refuses to stop without confirm, stops with it, and starts again', async () => {
    const reports: { host: string; kind: string; action: string; name: string }[] = [];
    fleet.broker.registry.on('report', (host, kind, payload) => {
      const event = payload as { action: string; name: string };
      reports.push({ host: host.name, kind, action: event.action, name: event.name });
    });
    const before = await call(client, 'docker_inspect', { host: 'engine-1', name: 'fm-sleeper' });
    const startedBefore = (before.structuredContent.state as { started_at_unix_ms: number }).started_at_unix_ms;
    const progress: string[] = [];
    const restarted = await call(
      client,
      'docker_restart',
      { host: 'engine-1', name: 'fm-sleeper', timeout_s: 0 },
      { onprogress: (p) => progress.push(p.message ?? '') },
    );
    expect(restarted.structuredContent).toMatchObject({ name: 'fm-sleeper', state: 'running', running: true, changed: true });
    // The caller heard what the engine did to the container as it did it.
    const told = progress.filter((message) => message.startsWith('engine-1: event='));
    expect(told).toEqual(expect.arrayContaining(['engine-1: event="die", exit_code=137', 'engine-1: event="start"']));
    expect(told.indexOf('engine-1: event="die", exit_code=137')).toBeLessThan(told.indexOf('engine-1: event="start"'));
    expect(restarted.structuredContent.started_at_unix_ms as number).toBeGreaterThan(startedBefore);

    const unconfirmed = await call(client, 'docker_stop', { host: 'engine-1', name: 'fm-sleeper' });
    expect(unconfirmed.isError).toBe(true);
    expect(unconfirmed.structuredContent).toMatchObject({
      error: { code: 'confirm_required' },
      targets: [{ host: 'engine-1', resource: 'container:engine-1/fm-sleeper' }],
    });
    expect((await docker.getContainer('fm-sleeper').inspect()).State.Running).toBe(true);

    const stopped = await call(client, 'docker_stop', { host: 'engine-1', name: 'fm-sleeper', timeout_s: 0, confirm: true });
    expect(stopped.structuredContent).toMatchObject({ state: 'exited', running: false, changed: true });
    const again = await call(client, 'docker_stop', { host: 'engine-1', name: 'fm-sleeper', confirm: true });
    expect(again.structuredContent).toMatchObject({ state: 'exited', changed: false });
    const started = await call(client, 'docker_start', { host: 'engine-1', name: 'fm-sleeper' });
    expect(started.structuredContent).toMatchObject({ state: 'running', running: true, changed: true });
    const events = await call(client, 'docker_events', { host: 'engine-1', name: 'fm-sleeper', limit: 10 });
    expect((events.structuredContent.events as { action: string }[]).map((e) => e.action)).toEqual(expect.arrayContaining(['start', 'die', 'stop', 'restart']));
    // The agent told the broker about each change as it happened (inventories follow the events; they are not the point here).
    const sleeperEvents = () => reports.filter((r) => r.kind === 'container_event' && r.name === 'fm-sleeper');
    await waitFor(() => sleeperEvents().some((r) => r.action === 'start'));
    expect(sleeperEvents().map((r) => r.action)).toEqual(expect.arrayContaining(['restart', 'stop', 'start']));
    expect(sleeperEvents().every((r) => r.host === 'engine-1')).toBe(true);
  });

  it("stops a container that ignores SIGTERM after Docker's grace period, answers success and audits ok", async () => {
    await runContainer(docker, { name: 'fm-stubborn', command: ['sh', '-c', 'trap "" TERM; sleep 1000'] });
    const stopped = await call(client, 'docker_stop', { host: 'engine-1', name: 'fm-stubborn', confirm: true });
    expect(stopped.isError).toBeFalsy();
    expect(stopped.structuredContent).toMatchObject({ name: 'fm-stubborn', running: false, exit_code: 137, changed: true });
    const [row] = await fleet.broker.store.audit.recent({ limit: 1 });
    expect(row).toMatchObject({ tool: 'docker_stop', outcome: 'ok', errorCode: null, note: null });
  });

  it('runs changes to one container in turn, and audits a change that finished after its deadline as it ended', async () => {
    await removeContainers(docker, ['fm-stubborn']);
    await runContainer(docker, { name: 'fm-stubborn', command: ['sh', '-c', 'trap "" TERM; sleep 1000'] });
    const killed = new Promise<void>((resolve) => {
      const onReport = (_host: unknown, kind: string, payload: unknown) => {
        const event = payload as { action: string; name: string };
        if (kind !== 'container_event' || event.action !== 'kill' || event.name !== 'fm-stubborn') return;
        fleet.broker.registry.off('report', onReport);
        resolve();
      };
      fleet.broker.registry.on('report', onReport);
    });
    const stopping = call(client, 'docker_stop', { host: 'engine-1', name: 'fm-stubborn', timeout_s: 3, confirm: true });
    await killed; // the engine is in the stop's grace period
    // The start waits for the stop before it; it does not answer a state about to change.
    const starting = await call(client, 'docker_start', { host: 'engine-1', name: 'fm-stubborn', timeout_ms: 1000 });
    expect(starting.structuredContent).toMatchObject({ availability: 'unavailable', errors: [{ code: 'deadline_exceeded' }] });
    expect((await stopping).structuredContent).toMatchObject({ running: false, changed: true });
    // The start went on after the stop and its true outcome reached the audit log.
    const row = await waitFor(
      async () =>
        (await fleet.broker.store.audit.recent({ limit: 5 })).find((r) => r.tool === 'docker_start' && r.arguments.timeout_ms === 1000 && r.outcome === 'ok'),
      { what: 'the late start in the audit log' },
    );
    expect(row.note).toMatch(/^engine-1 answered ok after \d+ ms, past the call's 1000 ms deadline$/);
    expect((await docker.getContainer('fm-stubborn').inspect()).State.Running).toBe(true);
  });

  it('answers a missing container with the closest names, and refuses flag-shaped names', async () => {
    const missing = await call(client, 'docker_logs', { host: 'engine-1', name: 'fm-loger' });
    expect(missing.isError).toBe(true);
    const node = missing.structuredContent as { errors: { code: string; message: string; hint: string }[] };
    expect(node.errors[0]).toMatchObject({ code: 'not_found', message: 'no container "fm-loger" on this host' });
    expect(node.errors[0]?.hint).toMatch(/Closest containers: fm-logger/);
    const flag = await call(client, 'docker_inspect', { host: 'engine-1', name: '--privileged' });
    expect((flag.structuredContent as typeof node).errors[0]).toMatchObject({ code: 'invalid_argument' });
  });

  it('finds which container publishes a port, and lists processes without command lines', async () => {
    const web = await docker.getContainer('fm-web').inspect();
    const hostPort = Number(web.NetworkSettings.Ports['80/tcp']?.[0]?.HostPort);
    const ports = await call(client, 'open_ports', { host: 'engine-1', port: hostPort });
    expect(ports.structuredContent.ports).toEqual(expect.arrayContaining([expect.objectContaining({ port: hostPort, protocol: 'tcp', container: 'fm-web' })]));
    const noEngine = await call(client, 'open_ports', { host: 'no-engine' });
    // No engine is absent, not failed (the system collector may still fail to name a socket's owner where /proc refuses it).
    expect(noEngine.structuredContent).toMatchObject({ absent_collectors: ['docker'] });
    expect(noEngine.structuredContent.failed_collectors).not.toContain('docker');

    const procs = await call(client, 'processes', { host: 'engine-1', limit: 5, sort_by: 'mem' });
    const list = procs.structuredContent.processes as Record<string, unknown>[];
    expect(list).toHaveLength(5);
    expect(Object.keys(list[0] ?? {}).sort()).toEqual(['container', 'cpu_percent', 'mem_percent', 'name', 'pid', 'rss_bytes', 'state', 'user']);
    expect(procs.structuredContent.total as number).toBeGreaterThan(5);
    expect((list[0]?.mem_percent as number) >= (list[4]?.mem_percent as number)).toBe(true);
  });

  it('classifies CPU, memory and disks against thresholds, overridable per call, and keeps the crossings', async () => {
    const strict = await call(client, 'alerts', { host: 'engine-1', disk_threshold: 1, memory_threshold: 100 });
    const alerts = strict.structuredContent.alerts as { metric: string; state: string; threshold_percent: number; value_percent: number }[];
    expect(alerts.find((a) => a.metric === 'disk')).toMatchObject({ state: 'critical', threshold_percent: 1 });
    expect(alerts.find((a) => a.metric === 'memory')).toMatchObject({ threshold_percent: 100 });
    expect(strict.structuredContent.worst).toBe('critical');

    // An agent whose own thresholds its host already crosses records the crossings.
    await fleet.addAgent('touchy', {
      collectors: 'default',
      dockerAddress: '/nonexistent/docker.sock',
      sampleIntervalMs: 500,
      alertThresholds: { cpu: 90, memory: 1, disk: 1 },
    });
    const history = await waitFor(async () => {
      const result = await call(client, 'alerts_history', { host: 'touchy' });
      const crossings = result.structuredContent.crossings as { metric: string; state: string }[];
      return crossings.some((c) => c.metric === 'memory') && crossings.some((c) => c.metric === 'disk') ? crossings : undefined;
    });
    expect(history.find((c) => c.metric === 'memory')).toMatchObject({ state: 'critical' });
  });

  it("sets a host's alert thresholds, which its alerts then use, and audits the change", async () => {
    const set = await call(client, 'set_alert_thresholds', { host: 'engine-1', memory_threshold: 100, disk_threshold: 99 });
    expect(set.structuredContent).toMatchObject({ thresholds: { cpu_percent: 90, memory_percent: 100, disk_percent: 99 }, changed: true });
    const alerts = (await call(client, 'alerts', { host: 'engine-1' })).structuredContent.alerts as { metric: string; threshold_percent: number }[];
    expect(alerts.find((a) => a.metric === 'memory')?.threshold_percent).toBe(100);
    expect(alerts.find((a) => a.metric === 'disk')?.threshold_percent).toBe(99);
    const again = await call(client, 'set_alert_thresholds', { host: 'engine-1', memory_threshold: 100 });
    expect(again.structuredContent.changed).toBe(false);
    const rows = await fleet.broker.store.audit.recent({ limit: 5, tool: 'set_alert_thresholds' });
    expect(rows[0]).toMatchObject({ outcome: 'ok', targets: ['engine-1'], arguments: { host: 'engine-1', memory_threshold: 100 } });
    await call(client, 'set_alert_thresholds', { host: 'engine-1', memory_threshold: 85, disk_threshold: 90 });
  });

  it('hides containers a grant does not cover, as if they did not exist', async () => {
    const narrow = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1, ['container:engine-1/fm-web*=write']));
    const list = await call(narrow, 'docker_list', { host: 'engine-1' });
    expect((list.structuredContent.containers as Row[]).map((c) => c.name)).toEqual(['fm-web']);
    const hidden = await call(narrow, 'docker_logs', { host: 'engine-1', name: 'fm-logger' });
    expect((hidden.structuredContent as { errors: { code: string }[] }).errors[0]?.code).toBe('not_found');
    const agents = await call(narrow, 'list_agents');
    expect((agents.structuredContent.agents as Row[]).map((a) => a.name)).toEqual(['engine-1']);
    await narrow.close();
  });
});

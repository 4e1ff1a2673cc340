import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { waitFor } from './harness/wait.ts';
import { type PveTestFleet, startPveTestFleet } from './proxmox/pve-test-fleet.ts';

interface Row {
  [key: string]: unknown;
}
interface Node {
  host: string;
  availability: string;
  failed_collectors: string[];
  errors: { code: string; message: string; hint: string; collector?: string }[];
  [key: string]: unknown;
}

describe('the proxmox tools through MCP, against a simulated two-node cluster', () => {
  let pve: PveTestFleet;

  beforeAll(async () => {
    pve = await startPveTestFleet({ taskDurationMs: 200 });
    // pve-a pins its node's certificate and may power guests; pve-b trusts the cluster CA and has only the read token.
    await pve.addPveAgent('pve-a', { node: 'pve1', actionTokenFile: pve.files.power });
    await pve.addPveAgent('pve-b', { node: 'pve2', caFile: pve.file('pve-root-ca.pem', pve.sim.caPem) });
    await pve.fleet.addAgent('plain', { collectors: 'default' });
  });
  afterAll(async () => {
    await pve?.stop();
  });

  it('tells the broker which Proxmox VE node and cluster each agent is on', async () => {
    const facts = (name: string) => pve.fleet.broker.registry.list().find((host) => host.name === name)?.hello?.facts;
    await waitFor(() => facts('pve-a')?.proxmox_node === 'pve1' && facts('pve-b')?.proxmox_node === 'pve2', { what: 'proxmox facts in Hello' });
    expect(facts('pve-a')).toMatchObject({ proxmox_node: 'pve1', proxmox_cluster: 'homelab' });
    expect(facts('pve-a')?.proxmox_insecure).toBeUndefined();
    expect(facts('plain')?.proxmox_node).toBeUndefined();
    const plain = pve.fleet.broker.registry.list().find((host) => host.name === 'plain');
    expect(plain?.hello?.collectors.find((c) => c.name === 'proxmox')).toEqual({
      name: 'proxmox',
      available: false,
      absent: true,
      reason: 'not configured (--proxmox-endpoint, --proxmox-token-file)',
    });
  });

  it('reports version, cluster and resources from each node, and says a host without Proxmox VE is not configured', async () => {
    const result = await pve.call('proxmox_status');
    // A host without Proxmox VE has nothing for it: left out of a call for every host, and named once as absent.
    const [a, b] = (result.structuredContent as { hosts: Node[] }).hosts;
    expect((result.structuredContent as { hosts: Node[] }).hosts.map((node) => node.host)).toEqual(['pve-a', 'pve-b']);
    expect(result.structuredContent.absent_collectors).toEqual([{ collector: 'proxmox', hosts: ['plain'] }]);
    const plain = (await pve.call('proxmox_status', { hosts: ['plain', 'pve-a'] })).structuredContent.hosts as Node[] | undefined;
    expect(a).toMatchObject({
      host: 'pve-a',
      availability: 'available',
      failed_collectors: [],
      answered_by_node: 'pve1',
      endpoint: pve.sim.endpoint('pve1'),
      version: { version: '8.3.2', release: '8.3', repoid: '3e76eec21c4a14a7' },
      cluster: { name: 'homelab', quorate: true, nodes_total: 2, nodes_online: 2 },
      resources: { nodes_total: 2, nodes_online: 2, qemu_total: 3, qemu_running: 2, lxc_total: 2, lxc_running: 1, templates: 1, storage_total: 2 },
    });
    expect((a?.cluster as { nodes: Row[] } | undefined)?.nodes).toEqual([
      { name: 'pve1', node_id: 1, online: true, ip: '10.20.0.11', local: true },
      { name: 'pve2', node_id: 2, online: true, ip: '10.20.0.12', local: false },
    ]);
    expect(b).toMatchObject({ host: 'pve-b', availability: 'available', answered_by_node: 'pve2', cluster: { name: 'homelab' } });
    const named = plain?.find((node) => node.host === 'plain');
    expect(named).toMatchObject({ host: 'plain', availability: 'unavailable' });
    expect(named?.errors[0]).toMatchObject({ code: 'collector_unavailable', collector: 'proxmox' });
    expect(named?.errors[0]?.message).toBe('proxmox (configuration): not configured (--proxmox-endpoint, --proxmox-token-file)');
    expect(named?.errors[0]?.hint).toMatch(/--proxmox-token-file.*\(failure class: configuration\)$/);
  });

  it('lists guests with numbers and units, filtered by node, status and type', async () => {
    const all = await pve.call('proxmox_guests', { host: 'pve-a' });
    const guests = all.structuredContent.guests as Row[];
    expect(guests.map((g) => g.vmid)).toEqual([101, 102, 103, 201, 202, 9000]);
    expect(all.structuredContent).toMatchObject({ answered_by_node: 'pve1', count: 6 });
    const web = guests.find((g) => g.vmid === 101);
    expect(web).toMatchObject({ name: 'web', node: 'pve1', type: 'qemu', status: 'running', template: false, cpus: 2, tags: ['prod', 'web'], lock: null });
    expect(web?.memory_max_bytes).toBe(4 * 1024 ** 3);
    expect(web?.memory_used_bytes).toBeGreaterThan(0);
    expect(web?.uptime_s).toBeGreaterThan(0);
    expect(typeof web?.cpu_percent).toBe('number');
    expect(guests.find((g) => g.vmid === 9000)).toMatchObject({ template: true, status: 'stopped' });

    const stoppedOnPve2 = await pve.call('proxmox_guests', { host: 'pve-b', node: 'pve2', status: 'stopped' });
    expect((stoppedOnPve2.structuredContent.guests as Row[]).map((g) => g.vmid)).toEqual([103, 202, 9000]);
    const containers = await pve.call('proxmox_guests', { host: 'pve-a', type: 'lxc' });
    expect((containers.structuredContent.guests as Row[]).map((g) => g.name)).toEqual(['dns', 'backup-proxy']);

    const unknown = await pve.call('proxmox_guests', { host: 'pve-a', node: 'pve3' });
    expect(unknown.isError).toBe(true);
    expect((unknown.structuredContent as Node).errors[0]).toMatchObject({ code: 'not_found', message: 'the cluster has no node "pve3"' });
    expect((unknown.structuredContent as Node).errors[0]?.hint).toMatch(/Closest nodes: pve1, pve2/);
  });

  it('puts every guest of the cluster in find and describe once, though two of its agents report them', async () => {
    const found = await waitFor(
      async () => {
        const result = await pve.call('find', { type: 'guest' });
        return (result.structuredContent.total as number) === 6 ? result.structuredContent : undefined;
      },
      { what: 'the guests in the index' },
    );
    expect((found.rows as Row[]).map((r) => `${r.name}:${r.id}:${r.state}:${r.detail}:${r.cluster}`)).toEqual([
      'backup-proxy:202:stopped:lxc on pve2:homelab',
      'db:102:running:qemu on pve1:homelab',
      'debian-12-template:9000:template:qemu on pve2:homelab',
      'dns:201:running:lxc on pve1:homelab',
      'web:101:running:qemu on pve1:homelab',
      'win-test:103:stopped:qemu on pve2:homelab',
    ]);
    const tagged = await pve.call('find', { type: 'guest', label: 'prod' });
    expect((tagged.structuredContent.rows as Row[]).map((r) => r.name)).toEqual(['db', 'web']);
    const onNode = await pve.call('find', { type: 'guests', node: 'pve2', state: 'stopped' });
    expect((onNode.structuredContent.rows as Row[]).map((r) => r.name)).toEqual(['backup-proxy', 'win-test']);

    const web = await pve.call('describe', { type: 'guest', id: 'web' });
    expect(web.structuredContent).toMatchObject({
      id: '101',
      type: 'guest',
      state: 'running',
      host: 'pve-a',
      cluster: 'homelab',
      details: { vmid: 101, guest_type: 'qemu', node: 'pve1', cpus: 2, memory_max_bytes: 4 * 1024 ** 3, tags: ['prod', 'web'] },
      related: [{ type: 'host', name: 'pve-a', relation: 'runs_on' }],
    });
    expect(web.structuredContent.since_unix_ms).toBeLessThan(Date.now());
    const byVmid = await pve.call('describe', { type: 'guest', id: '202' });
    expect(byVmid.structuredContent).toMatchObject({ name: 'backup-proxy', host: 'pve-b', details: { node: 'pve2' } });
    const missing = await pve.call('describe', { type: 'guest', id: 'webb' });
    expect(missing.structuredContent).toMatchObject({ error: { code: 'not_found' } });
    expect((missing.structuredContent as { error: { hint: string } }).error.hint).toContain('web');

    // A guest grant shows that guest only; a grant on a PVE agent's host shows what its API shows.
    const narrow = await mcpClient(pve.fleet.broker, await identityToken(pve.fleet.broker, 0, ['guest:d*']));
    const narrowRows = (await call(narrow, 'find', { type: 'guest' })).structuredContent.rows as Row[];
    expect(narrowRows.map((r) => r.name)).toEqual(['db', 'debian-12-template', 'dns']);
    await narrow.close();
    const viaHost = await mcpClient(pve.fleet.broker, await identityToken(pve.fleet.broker, 0, ['host:pve-*']));
    expect((await call(viaHost, 'find', { type: 'guest' })).structuredContent.total).toBe(6);
    await viaHost.close();
  });

  it("describes the agent's own node by default, and any other node by name", async () => {
    const own = await pve.call('proxmox_node', { host: 'pve-a' });
    expect(own.structuredContent).toMatchObject({
      node: 'pve1',
      answered_by_node: 'pve1',
      pve_version: 'pve-manager/8.3.2/3e76eec21c4a14a7',
      kernel: '6.8.12-5-pve',
      cpu: { usage_percent: 7.3, cores: 8, threads: 16, sockets: 1 },
      load: { load_1: 0.42, load_5: 0.38, load_15: 0.35 },
      memory: { total_bytes: 64 * 1024 ** 3, used_bytes: 21 * 1024 ** 3, available_bytes: 41 * 1024 ** 3, usage_percent: 32.8 },
      swap: { total_bytes: 8 * 1024 ** 3, used_bytes: 0 },
      rootfs: { total_bytes: 94 * 1024 ** 3, available_bytes: 77 * 1024 ** 3 },
    });
    expect(own.structuredContent.uptime_s).toBeGreaterThan(86_400);
    const other = await pve.call('proxmox_node', { host: 'pve-a', node: 'pve2' });
    expect(other.structuredContent).toMatchObject({ node: 'pve2', answered_by_node: 'pve1' });
    const unknown = await pve.call('proxmox_node', { host: 'pve-a', node: 'pve-1' });
    expect((unknown.structuredContent as Node).errors[0]).toMatchObject({ code: 'not_found' });
    expect((unknown.structuredContent as Node).errors[0]?.hint).toMatch(/Closest nodes: pve1/);
  });

  it('lists recent tasks newest first, filtered, with times in unix ms', async () => {
    const tasks = await pve.call('proxmox_tasks', { host: 'pve-a' });
    const rows = tasks.structuredContent.tasks as Row[];
    expect(tasks.structuredContent).toMatchObject({ node: 'pve1', answered_by_node: 'pve1' });
    expect(rows.map((t) => `${t.type}:${t.id}`).slice(0, 2)).toEqual(['vzdump:102', 'vzdump:101']);
    expect(rows[0]).toMatchObject({ status: 'stopped', exit_status: 'job errors', ok: false, user: 'root@pam', node: 'pve1' });
    expect(rows[0]?.starttime_unix_ms as number).toBeGreaterThan(rows[1]?.starttime_unix_ms as number);
    expect(rows[0]?.endtime_unix_ms as number).toBeGreaterThan(rows[0]?.starttime_unix_ms as number);
    expect(rows[0]?.upid).toMatch(/^UPID:pve1:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:vzdump:102:root@pam:$/);

    const failed = await pve.call('proxmox_tasks', { host: 'pve-a', errors_only: true });
    expect((failed.structuredContent.tasks as Row[]).map((t) => t.id)).toEqual(['102']);
    const ofGuest = await pve.call('proxmox_tasks', { host: 'pve-b', node: 'pve2', vmid: 103, limit: 5 });
    expect((ofGuest.structuredContent.tasks as Row[]).map((t) => t.type)).toEqual(['qmstart']);
    const byType = await pve.call('proxmox_tasks', { host: 'pve-b', node: 'pve2', type: 'aptupdate' });
    expect(byType.structuredContent.tasks).toEqual([expect.objectContaining({ type: 'aptupdate', id: '', ok: true })]);
  });

  it("gives one task's status and a bounded tail of its log", async () => {
    const list = await pve.call('proxmox_tasks', { host: 'pve-a', type: 'vzdump', vmid: 101 });
    const upid = (list.structuredContent.tasks as Row[])[0]?.upid as string;
    const status = await pve.call('proxmox_task_status', { host: 'pve-b', upid, log_lines: 10 });
    expect(status.structuredContent).toMatchObject({
      upid,
      node: 'pve1',
      answered_by_node: 'pve2',
      type: 'vzdump',
      id: '101',
      status: 'stopped',
      exit_status: 'OK',
      ok: true,
      log_total_lines: 123,
      log_truncated: true,
    });
    const log = status.structuredContent.log as { n: number; text: string }[];
    expect(log.map((line) => line.n)).toEqual([114, 115, 116, 117, 118, 119, 120, 121, 122, 123]);
    expect(log.at(-1)?.text).toBe('TASK OK');
    const whole = await pve.call('proxmox_task_status', { host: 'pve-a', upid, log_lines: 1000 });
    expect(whole.structuredContent).toMatchObject({ log_total_lines: 123, log_truncated: false });
    expect((whole.structuredContent.log as unknown[]).length).toBe(123);

    const missing = await pve.call('proxmox_task_status', { host: 'pve-a', upid: upid.replace(/:vzdump:/, ':qmstart:') });
    expect((missing.structuredContent as Node).errors[0]).toMatchObject({ code: 'not_found' });
    const malformed = await pve.call('proxmox_task_status', { host: 'pve-a', upid: 'UPID:nonsense' });
    expect(malformed.isError).toBe(true);
    expect(JSON.stringify(malformed.structuredContent)).toMatch(/invalid_argument/);
  });

  it('asks for confirm: true before any power action, and changes nothing without it', async () => {
    const start = await pve.call('proxmox_guest_start', { host: 'pve-a', node: 'pve2', type: 'qemu', vmid: 103 });
    expect(start.isError).toBe(true);
    expect((start.structuredContent as Node).errors[0]).toMatchObject({
      code: 'confirm_required',
      message: 'proxmox_guest_start would start qemu 103 on node pve2; nothing was changed',
    });
    const reboot = await pve.call('proxmox_guest_reboot', { host: 'pve-a', node: 'pve1', type: 'qemu', vmid: 101, confirm: false });
    expect((reboot.structuredContent as Node).errors[0]?.code).toBe('confirm_required');
    // shutdown is destructive: the broker refuses it before it reaches the agent, naming what would stop.
    const shutdown = await pve.call('proxmox_guest_shutdown', { host: 'pve-a', node: 'pve1', type: 'qemu', vmid: 101 });
    expect(shutdown.structuredContent).toMatchObject({ error: { code: 'confirm_required' }, targets: [{ host: 'pve-a' }] });
    const unnamed = await pve.call('proxmox_guest_start', { node: 'pve2', type: 'qemu', vmid: 103, confirm: true });
    expect(unnamed.structuredContent).toMatchObject({ error: { code: 'invalid_argument' } });
    expect(pve.sim.requests.filter((request) => request.method === 'POST')).toEqual([]);
    expect(pve.sim.cluster.guests.get(103)?.status).toBe('stopped');
  });

  it('starts a guest, follows its task to the end, then shuts it down, with the action token only', async () => {
    const started = await pve.call('proxmox_guest_start', { host: 'pve-a', node: 'pve2', type: 'qemu', vmid: 103, confirm: true });
    expect(started.structuredContent).toMatchObject({ status: 'accepted', action: 'start', node: 'pve2', type: 'qemu', vmid: 103, answered_by_node: 'pve1' });
    const startUpid = started.structuredContent.upid as string;
    expect(startUpid).toMatch(/^UPID:pve2:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:qmstart:103:fleetmesh@pve!power:$/);
    const startDone = await waitFor(
      async () => {
        const status = await pve.call('proxmox_task_status', { host: 'pve-a', upid: startUpid });
        return status.structuredContent.status === 'stopped' ? status.structuredContent : undefined;
      },
      { what: 'the start task to finish' },
    );
    expect(startDone).toMatchObject({ exit_status: 'OK', ok: true, user: 'fleetmesh@pve!power' });
    expect((startDone.log as { text: string }[]).map((line) => line.text)).toEqual(['VM 103 started', 'TASK OK']);
    const running = await pve.call('proxmox_guests', { host: 'pve-a', node: 'pve2', status: 'running' });
    expect((running.structuredContent.guests as Row[]).map((g) => g.vmid)).toEqual([103]);
    // The agent reads the guests again shortly after a power action, so the index follows without waiting a minute.
    await waitFor(async () => (await pve.call('describe', { type: 'guest', id: '103' })).structuredContent.state === 'running', {
      what: 'the index to see guest 103 running',
    });

    const again = await pve.call('proxmox_guest_start', { host: 'pve-a', node: 'pve2', type: 'qemu', vmid: 103, confirm: true });
    expect((again.structuredContent as Node).errors[0]).toMatchObject({ code: 'conflict' });
    expect((again.structuredContent as Node).errors[0]?.message).toContain('VM 103 already running');

    const stopping = await pve.call('proxmox_guest_shutdown', { host: 'pve-a', node: 'pve2', type: 'qemu', vmid: 103, confirm: true, timeout_s: 30 });
    expect(stopping.structuredContent).toMatchObject({ status: 'accepted', action: 'shutdown', vmid: 103 });
    const shutdownUpid = stopping.structuredContent.upid as string;
    const tasks = await pve.call('proxmox_tasks', { host: 'pve-a', node: 'pve2', vmid: 103, source: 'active' });
    expect((tasks.structuredContent.tasks as Row[]).map((t) => t.upid)).toContain(shutdownUpid);
    await waitFor(async () => (await pve.call('proxmox_task_status', { host: 'pve-b', upid: shutdownUpid })).structuredContent.ok === true, {
      what: 'the shutdown task to finish',
    });
    expect(pve.sim.cluster.guests.get(103)?.status).toBe('stopped');
    const finished = await pve.call('proxmox_tasks', { host: 'pve-b', node: 'pve2', vmid: 103, limit: 3 });
    expect((finished.structuredContent.tasks as Row[]).map((t) => `${t.type}:${t.status}:${t.exit_status}`)).toEqual([
      'qmshutdown:stopped:OK',
      'qmstart:stopped:OK',
      'qmstart:stopped:OK',
    ]);

    const posts = pve.sim.requests.filter((request) => request.method === 'POST');
    expect(posts.map((request) => `${request.path} ${request.status}`)).toEqual([
      '/api2/json/nodes/pve2/qemu/103/status/start 200',
      '/api2/json/nodes/pve2/qemu/103/status/start 500',
      '/api2/json/nodes/pve2/qemu/103/status/shutdown 200',
    ]);
    expect(posts.every((request) => request.tokenId === pve.tokens.power.id)).toBe(true);
    expect(pve.sim.requests.filter((request) => request.method === 'GET').every((request) => request.tokenId === pve.tokens.read.id)).toBe(true);
  });

  it('reboots a container, and answers a guest that does not exist with not_found', async () => {
    const rebooted = await pve.call('proxmox_guest_reboot', { host: 'pve-a', node: 'pve1', type: 'lxc', vmid: 201, confirm: true });
    const upid = rebooted.structuredContent.upid as string;
    expect(upid).toContain(':vzreboot:201:');
    await waitFor(async () => (await pve.call('proxmox_task_status', { host: 'pve-a', upid })).structuredContent.ok === true, { what: 'the reboot task' });
    expect(pve.sim.cluster.guests.get(201)?.status).toBe('running');
    const missing = await pve.call('proxmox_guest_start', { host: 'pve-a', node: 'pve1', type: 'lxc', vmid: 999, confirm: true });
    expect((missing.structuredContent as Node).errors[0]).toMatchObject({ code: 'not_found', collector: 'proxmox' });
    expect((missing.structuredContent as Node).errors[0]?.hint).toMatch(/proxmox_guests/);
  });

  it('refuses power actions on an agent without an action token, never falling back to the read token', async () => {
    const before = pve.sim.requests.length;
    const result = await pve.call('proxmox_guest_start', { host: 'pve-b', node: 'pve2', type: 'lxc', vmid: 202, confirm: true });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as Node).errors[0]).toMatchObject({
      code: 'collector_unavailable',
      message: 'proxmox (configuration): no action token is configured, so guest power actions are refused',
    });
    expect((result.structuredContent as Node).errors[0]?.hint).toMatch(/--proxmox-action-token-file/);
    expect(pve.sim.requests.length).toBe(before);
  });

  it('lists the curated helper scripts and hands out their command text, on any agent', async () => {
    const list = await pve.call('proxmox_script_list', { host: 'plain' });
    const scripts = list.structuredContent.scripts as Row[];
    expect(scripts.length).toBeGreaterThanOrEqual(10);
    expect(list.structuredContent.categories).toEqual(['access', 'backup', 'certificates', 'cluster', 'diagnostics', 'guests', 'storage', 'updates']);
    expect(Object.keys(scripts[0] ?? {}).sort()).toEqual(['category', 'description', 'id', 'risk', 'title']);
    const access = await pve.call('proxmox_script_list', { host: 'pve-a', category: 'access' });
    expect((access.structuredContent.scripts as Row[]).map((s) => s.id)).toEqual(['api-token-read', 'api-token-power', 'api-token-revoke']);
    const found = await pve.call('proxmox_script_list', { host: 'pve-a', query: 'FINGERPRINT' });
    expect((found.structuredContent.scripts as Row[]).map((s) => s.id)).toEqual(['cert-fingerprint']);

    const command = await pve.call('proxmox_script_command', { host: 'pve-a', id: 'cert-fingerprint' });
    expect(command.structuredContent).toMatchObject({ id: 'cert-fingerprint', category: 'certificates', risk: 'read' });
    expect(command.structuredContent.command).toContain('pvenode cert info');
    expect(command.structuredContent.runs_where).toMatch(/never runs it/);
    expect((command.structuredContent.notes as string[]).length).toBeGreaterThan(0);
    const typo = await pve.call('proxmox_script_command', { host: 'plain', id: 'cert-fingerprnt' });
    expect((typo.structuredContent as Node).errors[0]).toMatchObject({ code: 'not_found', message: 'no helper script "cert-fingerprnt"' });
    expect((typo.structuredContent as Node).errors[0]?.hint).toMatch(/^Closest ids: cert-fingerprint\./);
  });

  it('never shows a token secret in a result or a log line, and the simulator saw only documented calls', () => {
    const exposed = pve.exposed();
    expect(exposed.length).toBeGreaterThan(10_000);
    for (const secret of pve.secrets()) expect(exposed).not.toContain(secret);
    expect(pve.sim.violations).toEqual([]);
    expect(pve.sim.injected).toEqual([]);
  });
});

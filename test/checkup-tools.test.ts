import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import type { Collector } from '../agent/collectors/collector.ts';
import { checkupDomain } from '../shared/domains/checkup/checkup-domain.ts';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient, text } from './harness/mcp-client.ts';
import { type PveTestFleet, startPveTestFleet } from './proxmox/pve-test-fleet.ts';

interface Node {
  host: string;
  availability: string;
  failed_collectors: string[];
  errors: { code: string }[];
  [key: string]: unknown;
}
interface Change {
  kind: string;
  subject: string;
  before: string | null;
  after: string | null;
}

const NAMES = ['fm-ck-web', 'fm-ck-gone', 'fm-ck-swap', 'fm-ck-stop', 'fm-ck-new', 'fm-ck-sock'];
const HOSTS = ['engine-1', 'no-engine', 'pve-a', 'dies'];

/**
 * A collector that answers every check-up action by cutting its agent off the
 * broker while the call is in flight: the host that fails mid-call.
 */
function dyingCollector(stop: () => Promise<void>): Collector {
  return {
    name: 'checkup',
    probe: async () => ({ available: true, reason: '' }),
    register(dispatcher) {
      for (const action of checkupDomain.actions) {
        dispatcher.register(action, (_params, context) => {
          setImmediate(() => void stop());
          return new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true }));
        });
      }
    },
  };
}

describe('report, doctor, inventory and config_validate through MCP, fleet-wide on the real engine', () => {
  let pve: PveTestFleet;
  let docker: Docker;
  let engineDir: string;
  let configFile: string;

  /** (Re)connects the host that will drop off in the middle of the next call. */
  async function addDyingHost(): Promise<void> {
    let agent: Agent | undefined;
    agent = await pve.fleet.addAgent('dies', { collectors: [dyingCollector(() => pve.fleet.stopAgent(agent as Agent))] });
  }

  async function fleetCall(tool: string, args: Record<string, unknown> = {}) {
    await addDyingHost();
    const result = await pve.call(tool, { hosts: HOSTS, ...args });
    const hosts = (result.structuredContent as { hosts: Node[] }).hosts;
    const byName = (name: string) => hosts.find((node) => node.host === name) as Node;
    const dead = byName('dies');
    expect(dead.availability).toBe('unavailable');
    expect(['agent_disconnected', 'agent_offline']).toContain(dead.errors[0]?.code);
    return { result, byName, text: text(result) };
  }

  beforeAll(async () => {
    docker = testDocker();
    await removeContainers(docker, NAMES);
    await runContainer(docker, { name: 'fm-ck-web', command: ['httpd', '-f', '-p', '80'], publish: [80] });
    for (const name of ['fm-ck-gone', 'fm-ck-swap', 'fm-ck-stop']) await runContainer(docker, { name, command: ['sleep', '3600'] });
    const socket = inject('dockerHost').replace(/^unix:\/\//, '');
    const withSocket = await docker.createContainer({
      name: 'fm-ck-sock',
      Image: inject('testImage'),
      Cmd: ['sleep', '3600'],
      HostConfig: { Binds: [`${socket}:/var/run/docker.sock`] },
    });
    await withSocket.start();
    pve = await startPveTestFleet();
    engineDir = pve.fleet.agentDir('engine-1');
    configFile = join(pve.dir, 'engine-1.yaml');
    writeFileSync(configFile, 'log-level: info\n');
    await pve.fleet.addAgent('engine-1', { collectors: 'default', dockerAddress: inject('dockerHost'), sampleIntervalMs: 500, configPath: configFile });
    await pve.fleet.addAgent('no-engine', { collectors: 'default', sampleIntervalMs: 500 });
    await pve.addPveAgent('pve-a', { node: 'pve1', insecure: true });
  });
  afterAll(async () => {
    await pve?.stop();
    await removeContainers(docker, NAMES);
  });

  it('reports what changed since the previous snapshot, marks a silent collector skipped, and leads with the hosts that changed', async () => {
    const first = await fleetCall('report');
    expect(first.byName('engine-1')).toMatchObject({ availability: 'available', schema_version: 1, changed: false, previous_at_unix_ms: null, saved: true });
    // A host without an engine has nothing to collect there: not partial, no skipped section, and the absence said once for the fleet.
    const noEngine = first.byName('no-engine');
    expect(noEngine).toMatchObject({ availability: 'available', containers_running: null, containers_total: null, failed_collectors: [] });
    expect((noEngine.notable_changes as Change[]).some((c) => c.kind === 'section_skipped' && c.subject === 'docker')).toBe(false);
    expect(first.result.structuredContent?.absent_collectors).toContainEqual({ collector: 'docker', hosts: expect.arrayContaining(['no-engine']) });
    expect(first.text).toMatch(/Absent, not failed .*`docker` on [^.]*`no-engine`/);

    await docker.getContainer('fm-ck-gone').remove({ force: true });
    await docker.getContainer('fm-ck-swap').remove({ force: true });
    await runContainer(docker, { name: 'fm-ck-swap', command: ['sleep', '3601'] });
    await docker.getContainer('fm-ck-stop').stop({ t: 0 });
    await runContainer(docker, { name: 'fm-ck-new', command: ['sleep', '3600'] });

    const second = await fleetCall('report');
    const engine = second.byName('engine-1');
    expect(engine).toMatchObject({ changed: true, previous_at_unix_ms: expect.any(Number), snapshots_kept: 2 });
    const changes = engine.notable_changes as Change[];
    expect(changes).toEqual(
      expect.arrayContaining([
        { kind: 'container_gone', subject: 'fm-ck-gone', before: 'running', after: null },
        expect.objectContaining({ kind: 'container_replaced', subject: 'fm-ck-swap' }),
        { kind: 'state_changed', subject: 'fm-ck-stop', before: 'running', after: 'exited' },
        { kind: 'container_new', subject: 'fm-ck-new', before: null, after: 'running' },
      ]),
    );
    expect(changes.some((c) => c.subject === 'fm-ck-web')).toBe(false);
    expect(engine.needs_attention).toContainEqual({ kind: 'container_down', subject: 'fm-ck-stop', severity: 'warning', value: null });
    expect(engine.suggested_actions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tool: 'docker_logs', arguments: { host: 'engine-1', name: 'fm-ck-stop' } }),
        expect.objectContaining({ tool: 'docker_list', arguments: { name: 'fm-ck-gone' } }),
      ]),
    );
    // A host whose engine never answered has lost nothing: its docker section is skipped again, its containers unchanged.
    const silent = second.byName('no-engine');
    expect((silent.notable_changes as Change[]).filter((c) => c.kind.startsWith('container_'))).toEqual([]);
    expect(silent).toMatchObject({ availability: 'available', changed: false });

    // The text's table leads with the hosts that changed.
    const lines = second.text.split('\n');
    const header = (lines.find((line) => line.startsWith('| host |')) ?? '').split(' | ');
    const column = header.indexOf('changed');
    const flags = lines.filter((line) => line.startsWith('| `')).map((line) => line.split(' | ')[column]);
    expect(flags).toContain('yes');
    expect(flags.slice(flags.lastIndexOf('yes') + 1).every((flag) => flag !== 'yes')).toBe(true);
    expect(flags.indexOf('yes')).toBe(0);

    const dry = await pve.call('report', { host: 'engine-1', no_save: true });
    expect(dry.structuredContent).toMatchObject({ saved: false, snapshots_kept: 2 });
  });

  it('counts a collector with nothing to collect as absent, not failed: no partial answer, no failure listed, each absence said once', async () => {
    const status = await pve.call('system_status', { host: 'no-engine' });
    expect(status.structuredContent).toMatchObject({ availability: 'available', failed_collectors: [], absent_collectors: ['docker'] });
    const fleet = (await pve.call('get_fleet_status')).structuredContent as {
      unavailable_collectors: { host: string; collector: string }[];
      absent_collectors: { collector: string; hosts: string[] }[];
    };
    expect(fleet.unavailable_collectors.filter((c) => c.host === 'no-engine')).toEqual([]);
    const absentDocker = fleet.absent_collectors.filter((c) => c.collector === 'docker');
    expect(absentDocker).toEqual([expect.objectContaining({ hosts: expect.arrayContaining(['no-engine', 'pve-a']) })]);
    expect(fleet.absent_collectors.find((c) => c.collector === 'swarm')?.hosts).toEqual(expect.arrayContaining(['no-engine', 'pve-a']));
    // A read of every host leaves out those with nothing to read, and says so once.
    const list = await pve.call('docker_list');
    const listed = list.structuredContent as { hosts: Node[]; absent_collectors: { collector: string; hosts: string[] }[] };
    expect(listed.hosts.map((node) => node.host)).toEqual(['engine-1']);
    expect(listed.hosts[0]?.availability).toBe('available');
    expect(listed.absent_collectors).toEqual([{ collector: 'docker', hosts: expect.arrayContaining(['no-engine', 'pve-a']) }]);
    expect(text(list).match(/Absent, not failed/g)).toHaveLength(1);
  });

  it('finds the socket mount, public ports, missing or stale backups and insecure Proxmox trust, with pass, warn or fail per host', async () => {
    const { byName, text: body } = await fleetCall('doctor');
    const engine = byName('engine-1');
    expect(engine).toMatchObject({ schema_version: 1, status: 'fail' });
    const findings = engine.findings as { check: string; severity: string; category: string; subject: string; action: string }[];
    expect(findings).toContainEqual(
      expect.objectContaining({ check: 'docker_socket_mount', severity: 'critical', category: 'security', subject: 'fm-ck-sock' }),
    );
    expect(findings).toContainEqual(
      expect.objectContaining({ check: 'public_port', category: 'exposure', subject: expect.stringMatching(/^fm-ck-web \d+\/tcp$/) }),
    );
    expect(findings).toContainEqual(expect.objectContaining({ check: 'backup_age', severity: 'info', message: expect.stringContaining('not configured') }));
    const pveHost = byName('pve-a');
    expect(pveHost.status).toBe('warn');
    expect(pveHost.findings).toContainEqual(expect.objectContaining({ check: 'proxmox_trust', severity: 'warning', category: 'proxmox' }));
    // pve-a has no engine: an absent collector is no finding.
    expect(pveHost.findings).not.toContainEqual(expect.objectContaining({ check: 'collector_available', subject: 'docker' }));
    expect(body.split('\n').find((line) => line.startsWith('| `'))).toMatch(/^\| `engine-1` \| `available` \| `fail` \|/);

    const backups = join(engineDir, 'backups', 'fm-ck-web');
    mkdirSync(backups, { recursive: true });
    writeFileSync(join(backups, 'data.tar.gz'), 'archive');
    const tenDaysAgo = new Date(Date.now() - 10 * 24 * 3_600_000);
    utimesSync(join(backups, 'data.tar.gz'), tenDaysAgo, tenDaysAgo);
    const stale = await pve.call('doctor', { host: 'engine-1' });
    expect(stale.structuredContent.findings).toContainEqual(expect.objectContaining({ check: 'backup_age', severity: 'warning', category: 'backup' }));
    const lenient = await pve.call('doctor', { host: 'engine-1', backup_max_age_hours: 1000 });
    expect((lenient.structuredContent.findings as { check: string }[]).some((f) => f.check === 'backup_age')).toBe(false);
  });

  it('scans what runs where, and exports the whole fleet as one Mermaid graph or as json', async () => {
    const scan = await fleetCall('inventory_scan');
    const engine = scan.byName('engine-1');
    const web = (engine.containers as { name: string; ports: { public_port: number; private_port: number }[] }[]).find((c) => c.name === 'fm-ck-web');
    expect(web?.ports).toContainEqual(expect.objectContaining({ private_port: 80, public_port: expect.any(Number) }));
    expect(engine.docker_version).toEqual(expect.any(String));
    expect(scan.byName('no-engine')).toMatchObject({ availability: 'available', container_count: null, docker_version: null, failed_collectors: [] });
    expect(scan.result.structuredContent?.absent_collectors).toContainEqual({ collector: 'docker', hosts: expect.arrayContaining(['no-engine']) });
    const pveHost = scan.byName('pve-a');
    expect(pveHost.proxmox).toEqual({ node: 'pve1', cluster: 'homelab' });
    expect(pveHost.guest_count).toBeGreaterThan(0);

    const exported = await fleetCall('inventory_export');
    const blocks = [...exported.text.matchAll(/^```mermaid\n([\s\S]*?)\n```$/gm)];
    expect(blocks).toHaveLength(1);
    const graph = blocks[0]?.[1] as string;
    const lines = graph.split('\n');
    expect(lines[0]).toBe('flowchart LR');
    // Every line is a node with a quoted label, or an edge between ids the graph made.
    const grammar = [
      /^ {2}[a-z]\d+[a-z0-9]*(\["[^"]*"\]|\("[^"]*"\)|\(\["[^"]*"\]\)|\{\{"[^"]*"\}\}|\[\/"[^"]*"\/\])$/,
      /^ {2}[a-z]\d+[a-z0-9]* (-->|---) [a-z]\d+[a-z0-9]*$/,
      /^ {2}[a-z]\d+[a-z0-9]* -- "[^"]*" --- [a-z]\d+[a-z0-9]*$/,
    ];
    for (const line of lines.slice(1))
      expect(
        grammar.some((rule) => rule.test(line)),
        line,
      ).toBe(true);
    expect(graph).toContain('"host engine-1"');
    expect(graph).toContain('"host dies #40;no answer#41;"');
    expect(graph).toContain('"fm-ck-web #40;');
    expect(graph).toContain('"PVE homelab"');
    expect(graph).toMatch(/qemu \d+ /);

    const json = await pve.call('inventory_export', { hosts: ['engine-1', 'pve-a'], format: 'json' });
    expect(text(json)).not.toContain('```mermaid');
    expect((json.structuredContent as { hosts: Node[] }).hosts[0]).toMatchObject({ host: 'engine-1', format: 'json' });
  });

  it('shows a grant on one container that container, and nothing of the host: no ports, node id, hidden count, OS or hostname', async () => {
    const witness = (await pve.call('inventory_scan', { host: 'engine-1' })).structuredContent as Node;
    // What the host shows as a whole, which the limited identity must not learn.
    expect(witness.listening_ports).not.toEqual([]);
    expect(witness.container_count).toBeGreaterThan(1);
    const limited = await mcpClient(pve.fleet.broker, await identityToken(pve.fleet.broker, 0, ['container:engine-1/fm-ck-web']));
    try {
      expect((await call(limited, 'open_ports', { host: 'engine-1' })).isError).toBe(true);
      for (const [tool, args] of [
        ['inventory_scan', {}],
        ['inventory_export', { format: 'json' }],
        ['inventory_export', {}],
      ] as const) {
        const result = await call(limited, tool, { host: 'engine-1', ...args });
        const node = result.structuredContent as Node;
        expect((node.containers as { name: string }[]).map((c) => c.name)).toEqual(['fm-ck-web']);
        expect(node.container_count, tool).toBe(1);
        for (const field of ['listening_ports', 'hostname', 'os', 'arch', 'swarm', 'docker_version', 'guests', 'guest_count'])
          expect(node, `${tool} ${field}`).not.toHaveProperty(field);
        const everything = JSON.stringify(result);
        for (const secret of [String(witness.hostname), String(witness.os), 'fm-ck-gone', 'fm-ck-sock'])
          expect(everything.includes(secret), `${tool} shows ${secret}`).toBe(false);
        const nodeId = (witness.swarm as { node_id: string } | null)?.node_id;
        if (nodeId) expect(everything, tool).not.toContain(nodeId);
        expect(node.errors.map((e) => e.code)).toEqual(['not_found']);
      }
      const fleetWide = await call(limited, 'inventory_export', {});
      expect(text(fleetWide)).toContain('fm-ck-web');
      expect(text(fleetWide)).not.toContain(String(witness.hostname));
    } finally {
      await limited.close();
    }
  });

  it("validates the agent's config file with line numbers, as it is on disk now", async () => {
    writeFileSync(
      configFile,
      ['log-level: info', 'colour: blue', 'alert-cpu: lots', 'token-file: /nonexistent/token', 'data_dir: /tmp/a', 'data-dir: /tmp/b', ''].join('\n'),
    );
    const bad = await pve.call('config_validate', { host: 'engine-1' });
    expect(bad.structuredContent).toMatchObject({ file: configFile, valid: false, error_count: 3, warning_count: 1 });
    expect(bad.structuredContent.issues).toEqual([
      expect.objectContaining({ code: 'unknown_key', key: 'colour', line: 2, severity: 'error' }),
      expect.objectContaining({ code: 'wrong_type', key: 'alert-cpu', line: 3 }),
      expect.objectContaining({ code: 'unreadable_file', key: 'token-file', line: 4 }),
      expect.objectContaining({ code: 'duplicate_key', key: 'data-dir', line: 6, severity: 'warning' }),
    ]);
    expect(text(bad)).toContain('`colour`');

    const token = join(pve.dir, 'agent.token');
    writeFileSync(token, 'fm1.x.y', { mode: 0o600 });
    writeFileSync(configFile, `log-level: info\ntoken: fm1.a.b\ntoken-file: ${token}\n`);
    const conflict = await pve.call('config_validate', { host: 'engine-1' });
    expect(conflict.structuredContent.issues).toEqual([expect.objectContaining({ code: 'conflicting_keys', key: 'token', line: 2 })]);

    const loose = join(pve.dir, 'loose.token');
    writeFileSync(loose, 'fm1.x.y', { mode: 0o644 });
    writeFileSync(configFile, `token-file: ${loose}\n`);
    expect((await pve.call('config_validate', { host: 'engine-1' })).structuredContent).toMatchObject({ valid: true, warning_count: 1 });
    expect((await pve.call('config_validate', { host: 'engine-1', strict: true })).structuredContent).toMatchObject({ valid: false });

    const none = await pve.call('config_validate', { host: 'no-engine' });
    expect(none.structuredContent).toMatchObject({ file: null, valid: true, issues: [] });
  });
});

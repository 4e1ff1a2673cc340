import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { Dispatcher } from '../../agent/dispatcher/dispatcher.ts';
import { createIdentity } from '../../broker/auth/identities.ts';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import type { HostSample } from '../../shared/catalog/sample.ts';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { dockerList } from '../../shared/domains/docker/docker-actions.ts';
import type { ContainerInventory } from '../../shared/domains/swarm/records.ts';
import { systemStatus } from '../../shared/domains/system/system-actions.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { FLEETMESH_VERSION, PROTOCOL_VERSION } from '../../shared/version.ts';
import { preEnroll } from '../mesh/bench-fleet.ts';
import type { ScenarioResult } from '../report.ts';

/** What Claude Code accepts in one tool result: text it keeps in the conversation, and tokens of any result. */
const TEXT_CHARS_BUDGET = 50_000;
const STRUCTURED_TOKENS_BUDGET = 25_000;
const SYSTEM_STATUS_TEXT_TOKENS_BUDGET = 6_000;
const CONTAINERS_PER_HOST = 12;

type Identity = Awaited<ReturnType<typeof preEnroll>>['agents'][number];

/** Host i's figures: most are healthy, a few run hot, one in twenty cannot ask Docker. */
function sample(i: number): HostSample {
  return {
    cpu_percent: i % 17 === 3 ? 97.5 : 12.5 + (i % 7),
    memory_percent: i % 23 === 5 ? 91.2 : 41.2,
    memory_used_bytes: 3_400_000_000,
    memory_total_bytes: 8_200_000_000,
    disk_percent: i % 29 === 7 ? 96.4 : 55.1,
    disk_mount: '/',
    load_1: 0.42,
    containers_running: 10,
    containers_total: CONTAINERS_PER_HOST,
    net_rx_bytes: 123_456_789,
    net_tx_bytes: 98_765_432,
    sampled_at_unix_ms: Date.now(),
  };
}

function containers(identity: Identity, i: number) {
  return Array.from({ length: CONTAINERS_PER_HOST }, (_, c) => {
    const running = c < 10;
    return {
      id: `${identity.agentId}${String(c).padStart(4, '0')}`.padEnd(64, 'f'),
      name: `app-${c}-${identity.name}`,
      image: c % 3 === 0 ? 'nginx:1.27-alpine' : `registry.example.com/team/service-${c}:2026.11.${i % 28}`,
      state: running ? 'running' : 'exited',
      status: running ? `Up ${i + c} hours${c === 0 ? ' (healthy)' : ''}` : 'Exited (1) 2 hours ago',
      created_unix_ms: Date.now() - 86_400_000,
      started_at_unix_ms: running ? Date.now() - 3_600_000 : null,
      ports: c === 0 ? [{ private_port: 80, public_port: 8080, protocol: 'tcp', ip: '0.0.0.0' }] : [],
      health: c === 0 ? 'healthy' : null,
      restart_count: c === 11 ? 4 : 0,
      labels: { 'com.example.team': 'platform', 'com.example.tier': c % 2 ? 'backend' : 'frontend' },
    };
  });
}

/** A simulated agent: the real connection and dispatcher, answering agent.info, system.status and docker.list from memory. */
function simulatedAgent(identity: Identity, i: number, shared: { keys: { privateKeyPem: string }; caCertificatePem: string }, address: string) {
  const dispatcher = new Dispatcher(silentLogger);
  const startedAt = Date.now();
  const dockerUp = i % 20 !== 13;
  const facts = {
    hostname: identity.name,
    os: 'Debian GNU/Linux 12 (bookworm)',
    kernel: '6.1.0-28-amd64',
    arch: 'x64',
    cpu_cores: 8,
    memory_total_bytes: 8_200_000_000,
  };
  const collectors = [
    { name: 'system', available: true, reason: '' },
    { name: 'docker', available: dockerUp, reason: dockerUp ? '' : 'cannot reach /var/run/docker.sock: permission denied' },
  ];
  const rows = containers(identity, i);
  dispatcher.register(agentInfo, async () => ({
    payload: {
      agent_id: identity.agentId,
      name: identity.name,
      version: FLEETMESH_VERSION,
      protocol_version: PROTOCOL_VERSION,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      started_at_unix_ms: startedAt,
      collectors,
      labels: { role: i % 4 ? 'app' : 'db', zone: `zone-${i % 3}` },
      facts,
      sample: sample(i),
      certificate_not_after_unix_ms: identity.notAfter.getTime(),
    },
  }));
  dispatcher.register(systemStatus, async () => {
    const s = sample(i);
    return {
      payload: {
        schema_version: 1,
        hostname: identity.name,
        os: facts.os,
        kernel: facts.kernel,
        arch: facts.arch,
        uptime_s: 86_400 * (1 + (i % 40)),
        cpu: { usage_percent: s.cpu_percent, cores: 8, load_1: 0.42, load_5: 0.38, load_15: 0.35 },
        memory: { total_bytes: 8_200_000_000, used_bytes: 3_400_000_000, available_bytes: 4_800_000_000, usage_percent: s.memory_percent },
        disks: [
          { mount: '/', fs_type: 'ext4', total_bytes: 100_000_000_000, used_bytes: 55_100_000_000, usage_percent: s.disk_percent },
          { mount: '/var/lib/docker', fs_type: 'xfs', total_bytes: 500_000_000_000, used_bytes: 120_000_000_000, usage_percent: 24 },
        ],
        containers_running: dockerUp ? 10 : null,
        containers_total: dockerUp ? CONTAINERS_PER_HOST : null,
        sampled_at_unix_ms: Date.now(),
      },
      ...(dockerUp ? {} : { failedCollectors: ['docker'] }),
    };
  });
  dispatcher.register(dockerList, async () => {
    if (!dockerUp) throw new FleetError('collector_unavailable', 'Docker is not reachable on this host', { collector: 'docker' });
    return { payload: { containers: rows, count: rows.length } };
  });
  const connection = new BrokerConnection({
    dataDir: '/nonexistent',
    identity: { ...identity, brokerAddress: address, caCertificatePem: shared.caCertificatePem, privateKeyPem: shared.keys.privateKeyPem },
    dispatcher,
    hello: () => ({
      agentVersion: FLEETMESH_VERSION,
      protocolVersion: PROTOCOL_VERSION,
      actions: dispatcher.actions(),
      name: identity.name,
      collectors,
      labels: { role: i % 4 ? 'app' : 'db', zone: `zone-${i % 3}` },
      facts,
      startedUnixMs: BigInt(startedAt),
    }),
    sample: () => sample(i),
    log: silentLogger,
    backoffBaseMs: 500,
    backoffCapMs: 30_000,
  });
  connection.once('connected', () => {
    if (!dockerUp) return;
    const inventory: ContainerInventory = {
      taken_unix_ms: Date.now(),
      containers: rows.map((row) => ({
        id: row.id,
        name: row.name,
        image: row.image,
        state: row.state,
        status: row.status,
        created_unix_ms: row.created_unix_ms,
        labels: row.labels,
        service_name: null,
        task_id: null,
        task_name: null,
        stack: null,
        sandbox_id: null,
      })),
      volumes: [],
    };
    connection.report('container_inventory', inventory);
  });
  return connection;
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the simulated agents');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/**
 * N simulated agents on a broker; then the answers a model reads most, fleet-wide
 * with default arguments, measured as a client receives them: text characters and
 * o200k tokens, structuredContent tokens, beside the budgets.
 */
export async function tokensScenario(agentCount: number): Promise<ScenarioResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fm-bench-tokens-'));
  process.stderr.write(`  enrolling ${agentCount} simulated agents…\n`);
  const enrolled = await preEnroll(dataDir, agentCount);
  const broker = await Broker.start(inProcessBrokerOptions(dataDir, { operationsLevel: 3 }), silentLogger);
  const connections = enrolled.agents.map((identity, i) => simulatedAgent(identity, i, enrolled, `localhost:${broker.grpcPort}`));
  const client = new Client({ name: 'fleetmesh-bench', version: '1.0.0' });
  try {
    for (const connection of connections) connection.start();
    await until(() => broker.registry.list().filter((h) => h.state === 'online').length === agentCount, 300_000);
    await until(() => broker.index.inventoryEntries().length >= agentCount - Math.ceil(agentCount / 20), 60_000);
    const { token } = await createIdentity(broker.store, { name: 'bench-tokens', level: 3 });
    await client.connect(new StreamableHTTPClientTransport(new URL(broker.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    const calls: [string, string, Record<string, unknown>][] = [
      ['get_fleet_status', 'get_fleet_status', {}],
      ['system_status', 'system_status', {}],
      ['docker_list', 'docker_list', {}],
      ['list_agents', 'list_agents', {}],
      ['find', 'find', {}],
      ['find type=container', 'find', { type: 'container' }],
      ['describe host', 'describe', { type: 'host', id: enrolled.agents[7]?.name ?? '' }],
    ];
    const figures: Record<string, number | string> = {
      agents: agentCount,
      budgets: `text ≤ ${TEXT_CHARS_BUDGET} chars, structuredContent ≤ ${STRUCTURED_TOKENS_BUDGET} tokens, system_status text ≤ ${SYSTEM_STATUS_TEXT_TOKENS_BUDGET} tokens`,
    };
    const over: string[] = [];
    for (const [label, tool, args] of calls) {
      const result = (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
      const text = textOf(result);
      const textTokens = encode(text).length;
      const structuredTokens = encode(JSON.stringify(result.structuredContent ?? {})).length;
      figures[`${label}: text chars`] = text.length;
      figures[`${label}: text tokens`] = textTokens;
      figures[`${label}: structuredContent tokens`] = structuredTokens;
      const page = (result.structuredContent as { page?: { of: number } } | undefined)?.page;
      if (page) figures[`${label}: pages of hosts`] = page.of;
      if (result.isError) over.push(`${label} failed: ${text.slice(0, 200)}`);
      if (text.length > TEXT_CHARS_BUDGET) over.push(`${label} text`);
      if (structuredTokens > STRUCTURED_TOKENS_BUDGET) over.push(`${label} structuredContent`);
      if (tool === 'system_status' && textTokens > SYSTEM_STATUS_TEXT_TOKENS_BUDGET) over.push(`${label} text tokens`);
    }
    figures['over budget'] = over.length ? over.join('; ') : 'none';
    return { scenario: `tokens, ${agentCount} agents`, figures };
  } finally {
    await client.close().catch(() => {});
    await Promise.all(connections.map((c) => c.stop()));
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

import { RECONNECT_BACKOFF } from '../../agent/connection/backoff.ts';
import { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { Dispatcher } from '../../agent/dispatcher/dispatcher.ts';
import type { HostSample } from '../../shared/catalog/sample.ts';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { dockerList } from '../../shared/domains/docker/docker-actions.ts';
import { systemStatus } from '../../shared/domains/system/system-actions.ts';
import { type ContainerInventory, INVENTORY_INTERVAL_MS } from '../../shared/engine/records.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { FLEETMESH_VERSION, PROTOCOL_VERSION } from '../../shared/version.ts';
import type { ContainerFigures } from '../../shared/wire/sample-codec.ts';
import type { preEnroll } from '../mesh/bench-fleet.ts';
import { announcedActions } from './bench-sample.ts';

export const CONTAINERS_PER_HOST = 12;

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

/** The heartbeat figures of a host's running containers. */
function containerFigures(rows: ReturnType<typeof containers>): ContainerFigures[] {
  return rows
    .filter((row) => row.state === 'running')
    .map((row, c) => ({
      id: row.id,
      name: row.name,
      service: null,
      cpu_percent: 0.5 + c,
      memory_usage_bytes: 50_000_000 + c * 1_000_000,
      net_rx_bytes: 1_000_000 + c,
      net_tx_bytes: 2_000_000 + c,
    }));
}

/**
 * A simulated agent: the real connection and dispatcher, answering agent.info,
 * system.status and docker.list from memory. Unless `allDockerUp`, one host in
 * twenty cannot ask Docker, as on a real fleet.
 */
export function simulatedAgent(
  identity: Identity,
  i: number,
  shared: { keys: { privateKeyPem: string }; caCertificatePem: string },
  address: string,
  options: { allDockerUp?: boolean } = {},
) {
  const dispatcher = new Dispatcher(silentLogger);
  const startedAt = Date.now();
  const dockerUp = options.allDockerUp === true || i % 20 !== 13;
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
      actions: announcedActions(dispatcher.actions()),
      name: identity.name,
      collectors,
      labels: { role: i % 4 ? 'app' : 'db', zone: `zone-${i % 3}` },
      facts,
      startedUnixMs: BigInt(startedAt),
    }),
    sample: () => sample(i),
    // As an agent with Docker does: every heartbeat carries the running containers' figures.
    ...(dockerUp ? { containerSamples: () => containerFigures(rows) } : {}),
    log: silentLogger,
    backoffBaseMs: RECONNECT_BACKOFF.baseMs,
    backoffCapMs: RECONNECT_BACKOFF.capMs,
  });
  // As an agent with Docker does: its inventory once connected, and again every 30 s, mostly the same.
  const reportInventory = () => {
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
  };
  if (dockerUp) {
    let timer: NodeJS.Timeout | undefined;
    connection.on('connected', () => {
      reportInventory();
      // Each agent in its own phase, as agents started at different times are.
      timer = setTimeout(() => {
        timer = setInterval(reportInventory, INVENTORY_INTERVAL_MS);
      }, Math.random() * INVENTORY_INTERVAL_MS);
    });
    // Stopping the agent ends its stream too.
    connection.on('disconnected', () => clearTimeout(timer));
  }
  return connection;
}

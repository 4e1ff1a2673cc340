import { blockingConstraint, schedulable } from '../../../shared/domains/swarm/constraints.ts';
import { restartCounts } from '../../../shared/domains/swarm/convergence.ts';
import type { ServiceRecord, SwarmSnapshot } from '../../../shared/engine/records.ts';
import { mayRead } from '../../auth/visibility.ts';
import type { BrokerActionContext } from '../../calls/broker-action.ts';
import type { Finding, FindingSeverity } from '../broker-domain.ts';
import { SwarmIndexer } from './swarm-indexer.ts';
import { agentOnNode } from './swarm-nodes.ts';

const DAY = 86_400_000;

/** The mean per-replica use of a service over a window, from the metrics history (undefined without data). */
async function serviceUse(context: BrokerActionContext, service: ServiceRecord, sinceMs: number): Promise<{ cpu: number; memory: number } | undefined> {
  const rows = await context.metrics.rows('container', { service: service.name }, sinceMs);
  if (rows.length === 0) return undefined;
  const cpu = rows.filter((r) => r.cpu_percent !== null);
  const memory = rows.filter((r) => r.memory_bytes !== null);
  const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
  return { cpu: mean(cpu.map((r) => r.cpu_percent as number)), memory: mean(memory.map((r) => r.memory_bytes as number)) };
}

async function serviceFindings(service: ServiceRecord, snapshot: SwarmSnapshot, context: BrokerActionContext, now: number): Promise<Finding[]> {
  const target = { type: 'service', id: service.id, name: service.name, cluster: snapshot.cluster_name };
  const findings: Finding[] = [];
  const add = (severity: FindingSeverity, category: string, rationale: string, fix?: Finding['fix']) =>
    findings.push({ severity, category, target, rationale, ...(fix ? { fix } : {}) });
  const jobs = service.mode.endsWith('-job');
  if (!service.healthcheck && !jobs) {
    add(
      'info',
      'no-healthcheck',
      'Without a healthcheck Swarm counts a task healthy as soon as its process starts, so a rollout cannot tell a broken release.',
      { tool: 'update_service', section: 'healthcheck' },
    );
  }
  if (!jobs && (!service.restart_policy || service.restart_policy.condition === 'none')) {
    add('warning', 'no-restart-policy', 'A task that exits is not restarted: the service shrinks until someone notices.');
  }
  if (service.mode === 'replicated' && service.replicas === 1) {
    add('info', 'single-replica', 'One replica means every restart, update or node failure is an outage.', { tool: 'scale_service' });
  }
  const restarts = restartCounts(service, snapshot.tasks, now, context.index.indexer(SwarmIndexer).taskFailures(service.id, now - 7 * DAY));
  if (restarts.last_hour >= 3) {
    add(
      'critical',
      'flaky-service',
      `${restarts.last_hour} involuntary task terminations in the last hour (${restarts.last_week} this week): it is crash-looping now.`,
      service.has_previous_spec ? { tool: 'rollback_service' } : undefined,
    );
  } else if (restarts.last_week >= 5) {
    add('warning', 'flaky-service', `${restarts.last_week} involuntary task terminations this week: it fails from time to time.`);
  }
  const r = service.resources;
  if (r.cpu_limit_cores === null && r.memory_limit_bytes === null) {
    add('info', 'no-limits', 'No CPU or memory limit: one runaway task can starve its node.', { tool: 'update_service', section: 'resources' });
  }
  if (r.cpu_reservation_cores === null && r.memory_reservation_bytes === null) {
    add('info', 'no-reservations', 'No reservations: the scheduler cannot keep room for it, so it may land on a full node.', {
      tool: 'update_service',
      section: 'resources',
    });
  }
  const use = await serviceUse(context, service, now - DAY);
  if (use && r.memory_limit_bytes) {
    const share = use.memory / r.memory_limit_bytes;
    if (share >= 0.9) {
      add(
        share >= 1 ? 'critical' : 'warning',
        share >= 1 ? 'at-limit' : 'approaching-limit',
        `Replicas use ${Math.round(share * 100)}% of their memory limit on average over the last day: the kernel kills a task that crosses it.`,
        {
          tool: 'update_service',
          section: 'resources',
        },
      );
    }
  }
  if (use && r.cpu_limit_cores) {
    const share = use.cpu / 100 / r.cpu_limit_cores;
    if (share >= 0.9)
      add('warning', 'approaching-limit', `Replicas use ${Math.round(share * 100)}% of their CPU limit on average: they are being throttled.`, {
        tool: 'update_service',
        section: 'resources',
      });
  }
  if (use && r.memory_reservation_bytes && use.memory < r.memory_reservation_bytes * 0.25) {
    add(
      'info',
      'over-provisioned',
      `Replicas use ${Math.round((use.memory / r.memory_reservation_bytes) * 100)}% of the memory they reserve: the reservation keeps capacity from other services.`,
      {
        tool: 'update_service',
        section: 'resources',
      },
    );
  }
  // Uneven distribution: every replica on one node while other nodes could take them.
  const running = snapshot.tasks.filter((t) => t.service_id === service.id && t.desired_state === 'running' && t.state === 'running');
  const nodes = new Set(running.map((t) => t.node_id));
  const eligible = snapshot.nodes.filter((n) => schedulable(n) && !blockingConstraint(service.constraints, n));
  if (service.mode === 'replicated' && running.length >= 2 && nodes.size === 1 && eligible.length >= 2) {
    add(
      'info',
      'uneven-distribution',
      `All ${running.length} replicas run on one node although ${eligible.length} could take them: losing that node takes the service down.`,
      {
        tool: 'update_service',
        section: 'placement',
      },
    );
  }
  return findings;
}

function nodeFindings(snapshot: SwarmSnapshot, context: BrokerActionContext): Finding[] {
  const findings: Finding[] = [];
  const hosts = context.registry.list();
  const workers = snapshot.nodes.filter((n) => n.role === 'worker' && schedulable(n));
  for (const node of snapshot.nodes) {
    const target = { type: 'node', id: node.id, name: node.hostname, cluster: snapshot.cluster_name };
    const onNode = snapshot.tasks.filter((t) => t.node_id === node.id && t.desired_state === 'running');
    if (node.role === 'manager' && node.availability === 'active' && workers.length > 0 && onNode.length > 0) {
      findings.push({
        severity: 'info',
        category: 'manager-running-workloads',
        target,
        rationale: `This manager runs ${onNode.length} task(s) although workers exist: a busy manager can lose its Raft heartbeats and destabilise the swarm.`,
        fix: { tool: 'update_node', section: 'availability' },
      });
    }
    const sample = agentOnNode(hosts, node.id)?.sample;
    if (sample?.disk_percent !== null && sample?.disk_percent !== undefined && sample.disk_percent >= 90) {
      findings.push({
        severity: sample.disk_percent >= 95 ? 'critical' : 'warning',
        category: 'node-disk-full',
        target,
        rationale: `Disk ${sample.disk_mount ?? ''} is ${sample.disk_percent}% full: image pulls and logs will fail.`,
      });
    }
    if (sample?.memory_percent !== null && sample?.memory_percent !== undefined && sample.memory_percent >= 90) {
      findings.push({
        severity: sample.memory_percent >= 97 ? 'critical' : 'warning',
        category: 'node-memory-pressure',
        target,
        rationale: `Memory is ${sample.memory_percent}% used: the kernel will start killing processes.`,
      });
    }
  }
  return findings;
}

/** What to fix in every swarm the index holds, among the services and nodes the caller may read. */
export async function swarmFindings(context: BrokerActionContext, now: number): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const { snapshot } of context.index.indexer(SwarmIndexer).swarmEntries()) {
    for (const service of snapshot.services) {
      if (mayRead(context.identity, { type: 'service', name: service.name })) findings.push(...(await serviceFindings(service, snapshot, context, now)));
    }
    findings.push(...nodeFindings(snapshot, context).filter((f) => mayRead(context.identity, { type: 'node', name: f.target.name })));
  }
  return findings;
}

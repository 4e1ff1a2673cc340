import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { BrokerCluster } from './broker-cluster.ts';

/**
 * This broker's own figures in a cluster, in the Prometheus text format,
 * labelled with its broker id so one scrape per broker sums to the fleet.
 */
export function clusterMetrics(cluster: BrokerCluster, registry: AgentRegistry): string {
  const broker = `broker="${cluster.brokerId}"`;
  return [
    '# HELP fleetmesh_cluster_brokers Brokers this broker hears from on the bus, itself included.',
    '# TYPE fleetmesh_cluster_brokers gauge',
    `fleetmesh_cluster_brokers{${broker}} ${cluster.brokers().length}`,
    '# HELP fleetmesh_cluster_agents_held Agents whose stream this broker holds.',
    '# TYPE fleetmesh_cluster_agents_held gauge',
    `fleetmesh_cluster_agents_held{${broker}} ${registry.held().length}`,
    '# HELP fleetmesh_cluster_bus_up Whether this broker is connected to the bus (1) or not (0).',
    '# TYPE fleetmesh_cluster_bus_up gauge',
    `fleetmesh_cluster_bus_up{${broker}} ${cluster.problem() === undefined ? 1 : 0}`,
    '# HELP fleetmesh_bus_messages_dropped_total Bus messages this broker did not believe or act on, by reason.',
    '# TYPE fleetmesh_bus_messages_dropped_total counter',
    ...[...cluster.droppedMessages()].map(([reason, count]) => `fleetmesh_bus_messages_dropped_total{${broker},reason="${reason}"} ${count}`),
    '',
  ].join('\n');
}

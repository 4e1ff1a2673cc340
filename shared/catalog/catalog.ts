import type { Action } from './action.ts';
import { agentInfo, agentSetLabels } from './actions/agent-actions.ts';
import {
  dockerEvents,
  dockerInspect,
  dockerList,
  dockerLogs,
  dockerRestart,
  dockerStart,
  dockerStats,
  dockerStop,
  dockerTop,
} from './actions/docker-actions.ts';
import { fleetStatus, listAgents, revokeAgent } from './actions/fleet-actions.ts';
import { describe, find, getMetrics, getRecommendations } from './actions/index-actions.ts';
import {
  proxmoxGuestReboot,
  proxmoxGuestShutdown,
  proxmoxGuestStart,
  proxmoxGuests,
  proxmoxNode,
  proxmoxScriptCommand,
  proxmoxScriptList,
  proxmoxStatus,
  proxmoxTaskStatus,
  proxmoxTasks,
} from './actions/proxmox-actions.ts';
import * as sandbox from './actions/sandbox-actions.ts';
import * as swarm from './actions/swarm-actions.ts';
import { alerts, alertsHistory, openPorts, processes, systemStatus } from './actions/system-actions.ts';

/** Every action fleetmesh has, in the order docs list them. Adding one: declare it, add it here, handle it, test it. */
export const CATALOG: readonly Action[] = [
  fleetStatus,
  listAgents,
  revokeAgent,
  find,
  describe,
  getMetrics,
  getRecommendations,
  agentInfo,
  agentSetLabels,
  systemStatus,
  processes,
  openPorts,
  alerts,
  alertsHistory,
  dockerList,
  dockerStats,
  dockerLogs,
  dockerTop,
  dockerInspect,
  dockerStart,
  dockerRestart,
  dockerStop,
  dockerEvents,
  swarm.getClusterStatus,
  swarm.getTopology,
  swarm.getLogs,
  swarm.getEvents,
  swarm.watchService,
  swarm.scaleService,
  swarm.updateServiceImage,
  swarm.rollbackService,
  swarm.restartService,
  swarm.removeTask,
  swarm.updateService,
  swarm.updateServiceSecrets,
  swarm.updateServiceConfigs,
  swarm.updateServiceMounts,
  swarm.createSecret,
  swarm.createConfig,
  swarm.updateNodeLabels,
  swarm.updateNode,
  swarm.removeService,
  swarm.removeSecret,
  swarm.removeConfig,
  swarm.removeNetwork,
  swarm.removeVolume,
  sandbox.snapshot,
  sandbox.trace,
  sandbox.events,
  sandbox.cgroup,
  sandbox.layerstack,
  proxmoxStatus,
  proxmoxGuests,
  proxmoxNode,
  proxmoxTasks,
  proxmoxTaskStatus,
  proxmoxGuestStart,
  proxmoxGuestReboot,
  proxmoxGuestShutdown,
  proxmoxScriptList,
  proxmoxScriptCommand,
];

/** Domains in catalog order. */
export function domains(): string[] {
  return [...new Set(CATALOG.map((action) => action.id.slice(0, action.id.indexOf('.'))))];
}

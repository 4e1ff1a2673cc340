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
import { alerts, alertsHistory, openPorts, processes, systemStatus } from './actions/system-actions.ts';

/** Every action fleetmesh has, in the order docs list them. Adding one: declare it, add it here, handle it, test it. */
export const CATALOG: readonly Action[] = [
  fleetStatus,
  listAgents,
  revokeAgent,
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

const byId = new Map(CATALOG.map((action) => [action.id, action]));
const byTool = new Map(CATALOG.map((action) => [action.tool, action]));

export function actionById(id: string): Action | undefined {
  return byId.get(id);
}

export function actionByTool(tool: string): Action | undefined {
  return byTool.get(tool);
}

/** Domains in catalog order. */
export function domains(): string[] {
  return [...new Set(CATALOG.map((action) => action.id.slice(0, action.id.indexOf('.'))))];
}

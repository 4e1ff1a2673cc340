import type { Domain } from '../domain.ts';
import { alerts, alertsHistory, openPorts, processes, systemStatus } from './system-actions.ts';

/** The host: its load, processes, ports and alerts. */
export const systemDomain: Domain = { name: 'system', actions: [systemStatus, processes, openPorts, alerts, alertsHistory], reports: {} };

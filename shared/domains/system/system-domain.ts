import type { Domain } from '../domain.ts';
import { alertCrossingSchema } from './alert-crossing.ts';
import { alerts, alertsHistory, openPorts, processes, setAlertThresholds, systemStatus } from './system-actions.ts';
import { systemHead } from './system-head.ts';

/** The system domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const systemDomain = {
  ...systemHead,
  actions: [systemStatus, processes, openPorts, alerts, alertsHistory, setAlertThresholds],
  reports: { alert_crossing: alertCrossingSchema },
} as const satisfies Domain;

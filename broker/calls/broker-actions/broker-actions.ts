import type { BrokerActionHandler } from './broker-action.ts';
import { describeResourceHandler, findResourcesHandler } from './find-describe.ts';
import { fleetStatusHandler } from './fleet-status.ts';
import { getMetricsHandler } from './get-metrics.ts';
import { listAgentsHandler } from './list-agents.ts';
import { notifyTestHandler } from './notify-test.ts';
import { recommendationsHandler } from './recommendations.ts';
import { revokeAgentsHandler } from './revoke-agents.ts';
import { wakeHandler } from './wake.ts';

/** Every action the broker answers itself. */
export const BROKER_ACTIONS: readonly BrokerActionHandler[] = [
  listAgentsHandler,
  fleetStatusHandler,
  revokeAgentsHandler,
  findResourcesHandler,
  describeResourceHandler,
  getMetricsHandler,
  recommendationsHandler,
  notifyTestHandler,
  wakeHandler,
];

import type { BrokerActionHandler } from './broker-action.ts';
import { fleetStatusHandler } from './fleet-status.ts';
import { listAgentsHandler } from './list-agents.ts';
import { revokeAgentsHandler } from './revoke-agents.ts';

/** Every action the broker answers itself. */
export const BROKER_ACTIONS: readonly BrokerActionHandler[] = [listAgentsHandler, fleetStatusHandler, revokeAgentsHandler];

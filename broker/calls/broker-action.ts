import type { Action, ActionInput } from '../../shared/catalog/action.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { CallAuthority } from '../agents/agent-session.ts';
import type { Identity } from '../auth/identities.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import type { UsageHistory } from '../metrics/usage-history.ts';
import type { BrokerServices } from '../services/broker-services.ts';
import type { BrokerStore } from '../store/broker-store.ts';

export interface BrokerActionContext {
  identity: Identity;
  registry: AgentRegistry;
  store: BrokerStore;
  index: FleetIndex;
  metrics: UsageHistory;
  /** The services the broker runs for its domains: `services.get(notifyService)`. */
  services: BrokerServices;
  log: Logger;
  signal: AbortSignal;
  /** The hosts this identity may see. */
  visibleHosts(): Host[];
  /** What calls to agents carry for a broker of a cluster that runs them, and the call's audit row (tool calls only). */
  authority?: CallAuthority;
  auditId?: string | undefined;
}

/** An action the broker answers itself. */
export interface BrokerActionHandler<A extends Action = Action> {
  action: A;
  /** The hosts a change would hit, for confirm_required and the audit log (changing actions only). */
  targets?(params: ActionInput<A>, context: BrokerActionContext): string[];
  run(params: ActionInput<A>, context: BrokerActionContext): Promise<Record<string, unknown>>;
  /** The agent actions it sends on the caller's behalf: a broker of a cluster runs those for it and no others. */
  sends?: readonly string[];
}

export function defineBrokerAction<A extends Action>(handler: BrokerActionHandler<A>): BrokerActionHandler {
  return handler as unknown as BrokerActionHandler;
}

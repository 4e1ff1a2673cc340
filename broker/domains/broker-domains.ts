import type { AgentRoleDeclaration } from '../agents/claims.ts';
import type { BrokerActionHandler } from '../calls/broker-action.ts';
import type { BrokerServicePlugin } from '../services/broker-service.ts';
import type { BrokerDomain, WidgetDeclaration } from './broker-domain.ts';
import { BROKER_DOMAIN_FOLDERS } from './broker-domains.gen.ts';

/** Every domain's broker half, one per folder of broker/domains/ (listed there by `npm run gen`), in its domain's rank. */
export const BROKER_DOMAINS: readonly BrokerDomain[] = [...BROKER_DOMAIN_FOLDERS].sort(
  (a, b) => a.domain.rank - b.domain.rank || a.domain.name.localeCompare(b.domain.name),
);

/** Every role over a shared object the domains declare, in their order: what agents claim, join tokens give and the operator approves. */
export const AGENT_ROLES: readonly AgentRoleDeclaration[] = BROKER_DOMAINS.flatMap((broker) => broker.roles ?? []);

/** The names of those roles. */
export const AGENT_ROLE_NAMES: readonly string[] = AGENT_ROLES.map((role) => role.name);

/** Every MCP Apps widget the domains declare, in their order. */
export const WIDGETS: readonly WidgetDeclaration[] = BROKER_DOMAINS.flatMap((broker) => broker.widgets ?? []);

/** Every action the broker answers itself, from the domains' broker halves. */
export const BROKER_ACTIONS: readonly BrokerActionHandler[] = BROKER_DOMAINS.flatMap((broker) => broker.actions ?? []);

/** Every service the broker runs for its domains' broker actions. */
export const BROKER_SERVICES: readonly BrokerServicePlugin[] = BROKER_DOMAINS.flatMap((broker) => broker.services ?? []);

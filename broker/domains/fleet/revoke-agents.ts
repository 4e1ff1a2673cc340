import { revokeAgent } from '../../../shared/domains/fleet/fleet-actions.ts';
import { defineBrokerAction } from '../../calls/broker-action.ts';
import { resolveTargets } from '../../calls/targets.ts';

export const revokeAgentsHandler = defineBrokerAction({
  action: revokeAgent,
  targets(params, context) {
    return resolveTargets(context.visibleHosts(), context.identity, revokeAgent, params).hosts.map((host) => host.name);
  },
  async run(params, context) {
    const { hosts } = resolveTargets(context.visibleHosts(), context.identity, revokeAgent, params);
    const revoked = [];
    for (const host of hosts) {
      const serials = await context.registry.revoke(host.id, params.reason ?? `revoked through MCP by ${context.identity.name}`);
      context.log.info('agent revoked through MCP', { agent: host.name, by: context.identity.name });
      revoked.push({ host: host.name, id: host.id, certificates: serials.length });
    }
    return { revoked };
  },
});

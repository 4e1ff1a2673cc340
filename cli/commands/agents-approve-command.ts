import { resolve } from 'node:path';
import { approveAgent, withdrawAgentRoles } from '../../broker/admin/approve-agent.ts';
import { AGENT_ROLE_NAMES } from '../../broker/domains/broker-domains.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { BROKER_DATA_DIR_FLAG } from '../../shared/options/common-flags.ts';
import { defineCommand } from '../command.ts';

export const agentsApproveCommand = defineCommand({
  spec: {
    name: 'agents approve',
    summary: "Approve what an agent claims over a shared object (a cluster's manager or member role), or withdraw it.",
    usage: 'fleetmesh agents approve AGENT [--role ROLE] [--scope OBJECT] [--withdraw]',
    details:
      "Without --scope, approves the claims of the agent's last Hello, bound to the object they name. Until then the agent is served as a plain host. See docs/claims.md.",
    positionals: [{ name: 'AGENT', description: 'the agent name or id (fleetmesh agents lists them and their claims)', required: true }],
    flags: {
      ...BROKER_DATA_DIR_FLAG,
      role: { type: 'string', description: `only this role: ${AGENT_ROLE_NAMES.join(' or ')}`, placeholder: 'ROLE', env: false },
      scope: { type: 'string', description: 'the id or name of the shared object the role covers (default: the one claimed)', placeholder: 'ID', env: false },
      withdraw: { type: 'boolean', description: 'withdraw the role(s) instead; the agent becomes a plain host again', default: false, env: false },
    },
  },
  async run(parsed, io) {
    const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
    try {
      const agent = parsed.positionals[0] ?? '';
      if (parsed.values.withdraw) {
        const { name, withdrawn } = await withdrawAgentRoles(store, agent, parsed.values.role);
        io.stdout(`withdrew ${withdrawn} role grant${withdrawn === 1 ? '' : 's'} of agent ${name}\n`);
        return 0;
      }
      const { name, grants } = await approveAgent(store, { agent, role: parsed.values.role, scope: parsed.values.scope });
      for (const grant of grants) io.stdout(`approved agent ${name} as ${grant.role} of ${grant.scope}\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});

import { resolve } from 'node:path';
import { findAgent, revokeAgent } from '../../broker/admin/revoke-agent.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { BROKER_DATA_DIR_FLAG } from '../../shared/options/common-flags.ts';
import { brokerRunning } from '../broker-process.ts';
import { defineCommand } from '../command.ts';

export const revokeCommand = defineCommand({
  spec: {
    name: 'revoke',
    summary: "Revoke an agent's certificates: a running broker closes its stream at once and refuses it from then on.",
    usage: 'fleetmesh revoke AGENT [--reason TEXT]',
    positionals: [{ name: 'AGENT', description: 'the agent name or id (fleetmesh agents lists them)', required: true }],
    flags: {
      ...BROKER_DATA_DIR_FLAG,
      reason: { type: 'string', description: 'why, for the record', default: 'revoked by an operator', placeholder: 'TEXT', env: false },
    },
  },
  async run(parsed, io) {
    const dataDir = resolve(parsed.values['data-dir']);
    const store = await BrokerStore.open(dataDir, { create: false, store: parsed.values.store });
    try {
      const agent = await findAgent(store, parsed.positionals[0] ?? '');
      const serials = await revokeAgent(store, agent.id, parsed.values.reason);
      io.stdout(
        `revoked agent ${agent.name} (${agent.id}): ${serials.length} certificate${serials.length === 1 ? '' : 's'} revoked.\n` +
          (brokerRunning(dataDir)
            ? 'The broker closes its stream now and will refuse it from now on.\n'
            : 'The broker is not running; it will refuse the agent when it starts.\n'),
      );
      return 0;
    } finally {
      await store.close();
    }
  },
});

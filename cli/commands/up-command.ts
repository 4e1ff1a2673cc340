import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent } from '../../agent/agent.ts';
import { resolveAgentOptions } from '../../agent/agent-options.ts';
import { loadIdentity } from '../../agent/identity/agent-identity.ts';
import { Broker } from '../../broker/broker.ts';
import { BROKER_FLAGS, resolveBrokerOptions } from '../../broker/broker-options.ts';
import { createJoinToken } from '../../broker/enrollment/join-tokens.ts';
import { createLogger } from '../../shared/log/logger.ts';
import type { FlagSpec } from '../../shared/options/command-line.ts';
import { LOG_FLAGS } from '../../shared/options/common-flags.ts';
import { defineCommand } from '../command.ts';
import { untilSignal } from '../until-signal.ts';

const UP_FLAGS = {
  'data-dir': {
    type: 'string',
    description: 'state of both the broker (DIR/broker) and the local agent (DIR/agent)',
    default: '.fleetmesh',
    placeholder: 'DIR',
  },
  'grpc-listen': BROKER_FLAGS['grpc-listen'],
  'advertise-names': BROKER_FLAGS['advertise-names'],
  'heartbeat-interval': BROKER_FLAGS['heartbeat-interval'],
  name: { type: 'string', description: 'the local agent name', default: hostname(), placeholder: 'NAME', env: 'FLEETMESH_AGENT_NAME' },
  ...LOG_FLAGS,
} as const satisfies Record<string, FlagSpec>;

export const upCommand = defineCommand({
  spec: {
    name: 'up',
    summary: 'Start a broker and a local agent on this machine, with nothing to configure (what npm start runs).',
    usage: 'fleetmesh up [flags]',
    details: 'State lives in ./.fleetmesh/ by default: DIR/broker for the broker (admin commands default to it) and DIR/agent for the local agent.',
    flags: UP_FLAGS,
    configFile: true,
  },
  async run(parsed, io) {
    const { values } = parsed;
    const root = resolve(values['data-dir']);
    const brokerDir = join(root, 'broker');
    const agentDir = join(root, 'agent');
    const brokerOptions = resolveBrokerOptions({
      'data-dir': brokerDir,
      'grpc-listen': values['grpc-listen'],
      'advertise-names': values['advertise-names'],
      'heartbeat-interval': values['heartbeat-interval'],
      'cert-lifetime': 30 * 86_400_000,
      'log-level': values['log-level'],
      'log-format': values['log-format'],
    });
    const log = createLogger({ level: brokerOptions.logLevel, format: brokerOptions.logFormat });
    const broker = await Broker.start(brokerOptions, log.child({ component: 'broker' }));
    let agent: Agent | undefined;
    try {
      const brokerAddress = `localhost:${broker.grpcPort}`;
      const enrolled = loadIdentity(agentDir) !== undefined;
      const token = enrolled ? undefined : createJoinToken(broker.store, { ttlMs: 10 * 60_000, uses: 1, labels: {} }).token;
      const agentOptions = resolveAgentOptions({
        broker: brokerAddress,
        token,
        'ca-pin': broker.authority.pin,
        name: values.name,
        labels: {},
        'data-dir': agentDir,
        'log-level': values['log-level'],
        'log-format': values['log-format'],
      });
      agent = await Agent.start(agentOptions, log.child({ component: 'agent' }));
      await agent.connection.waitConnected();
      const name = agent.connection.currentIdentity.name;
      io.stdout(
        [
          '',
          'fleetmesh is up.',
          '',
          `  agents connect to   ${brokerOptions.grpcListen.replace(/:\d+$/, `:${broker.grpcPort}`)} (gRPC, mutual TLS; CA pin ${broker.authority.pin})`,
          `  local agent         ${name} (online)`,
          `  state               ${root}`,
          '',
          'Add another host: create a join token here, then run the command it prints on that host:',
          `  npx fleetmesh token create --data-dir ${brokerDir}`,
          `See the fleet:  npx fleetmesh agents --data-dir ${brokerDir}`,
          '',
          'Press Ctrl-C to stop.',
          '',
        ].join('\n'),
      );
      const signal = await untilSignal();
      log.info('stopping', { signal });
    } finally {
      await agent?.stop();
      await broker.stop();
    }
    return 0;
  },
});

/**
 * One process of a bench's simulated fleet (the cluster bench, the soak):
 * agents `start` to `end` of the enrolled fleet in the file named, each
 * dialling the brokers in turn from a different first one, so that at 10,000
 * agents and more the fleet is not one event loop the brokers wait on. Driven
 * over IPC (`startFleet` in fleet-processes.ts): `connect` starts the slice,
 * `stop` closes it.
 */
import type { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { readEnrolled } from '../mesh/bench-fleet.ts';
import { simulatedAgent } from './simulated-agent.ts';

type Enrolled = ReturnType<typeof readEnrolled>;
type Request = { id: number; type: 'connect'; addresses: string[] } | { id: number; type: 'stop' };

const [file = '', start = '0', end = '0'] = process.argv.slice(2);
const enrolled = readEnrolled(file);
const connections: BrokerConnection[] = [];
/** Connections started before the event loop is let go once, as in the mesh bench's simulators. */
const START_BATCH = 50;

process.on('message', async (message: Request) => {
  if (message.type === 'connect') {
    const { addresses } = message;
    for (let i = Number(start); i < Math.min(Number(end), enrolled.agents.length); i++) {
      const first = i % addresses.length;
      const dial = [...addresses.slice(first), ...addresses.slice(0, first)].join(',');
      const connection = simulatedAgent(enrolled.agents[i] as Enrolled['agents'][number], i, enrolled, dial, { allDockerUp: true });
      connections.push(connection);
      connection.start();
      if (connections.length % START_BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    process.send?.({ id: message.id });
  } else {
    await Promise.all(connections.map((connection) => connection.stop()));
    process.send?.({ id: message.id });
    process.exit(0);
  }
});
// The bench that started us is gone: nothing else would close these connections.
process.on('disconnect', () => process.exit(1));
process.send?.({ id: 0, ready: true });

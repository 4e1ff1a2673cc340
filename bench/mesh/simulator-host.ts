/**
 * One simulator process of the mesh bench: a slice of the simulated agents
 * and of the bare echo streams, so that at 10,000 agents the simulator is not
 * one event loop the broker waits on. Driven over IPC by mesh-bench.ts:
 * `connect` starts a slice (agents enrolled by the parent, read from the file
 * it names), `stop` closes them all.
 */
import type * as grpc from '@grpc/grpc-js';
import type { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { readEnrolled } from './bench-fleet.ts';
import { loopDelay } from './loop-delay.ts';
import { connectEchoStreams, simulatedAgent } from './mesh-clients.ts';

type Request =
  | { id: number; type: 'connect'; kind: 'bare' | 'mesh'; address: string; port: number; start: number; end: number }
  | { id: number; type: 'lag' }
  | { id: number; type: 'stop' };

const file = process.argv[2] ?? '';
const enrolled = readEnrolled(file);
const connections: BrokerConnection[] = [];
/** Connections started before the event loop is let go once. */
const START_BATCH = 50;
/** How late this process's event loop runs: a simulator that lags seconds is what the broker would be waiting on. */
const delay = loopDelay();
const clients: grpc.Client[] = [];

process.on('message', async (message: Request) => {
  if (message.type === 'connect') {
    const slice = enrolled.agents.slice(message.start, message.end);
    // Started a batch at a time, the event loop free between two: 2,500 started in one go kept the loop for about
    // 28 s, and the first connections' TLS hellos waited behind the last ones' set-up past the broker's hello clock.
    for (let at = 0; at < slice.length; at += START_BATCH) {
      const batch = slice.slice(at, at + START_BATCH);
      if (message.kind === 'bare') connectEchoStreams(message.port, { ...enrolled, agents: batch }, clients);
      else {
        for (const identity of batch) {
          const connection = simulatedAgent(identity, enrolled, message.address);
          connections.push(connection);
          connection.start();
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    process.send?.({ id: message.id });
  } else if (message.type === 'lag') {
    process.send?.({ id: message.id, ...delay() });
  } else if (message.type === 'stop') {
    await Promise.all(connections.map((connection) => connection.stop()));
    for (const client of clients) client.close();
    process.send?.({ id: message.id });
    process.exit(0);
  }
});
process.send?.({ id: 0, ready: true });

/**
 * One simulator process of the mesh bench: a slice of the simulated agents
 * and of the bare echo streams, so that at 10,000 agents the simulator is not
 * one event loop the broker waits on. Driven over IPC by mesh-bench.ts:
 * `connect` starts a slice (agents enrolled by the parent, read from the file
 * it names), `stop` closes them all.
 */
import { readFileSync } from 'node:fs';
import type * as grpc from '@grpc/grpc-js';
import type { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { connectEchoStreams, type Enrolled, simulatedAgent } from './mesh-clients.ts';

type Request = { id: number; type: 'connect'; kind: 'bare' | 'mesh'; address: string; port: number; start: number; end: number } | { id: number; type: 'stop' };

const file = process.argv[2] ?? '';
const stored = JSON.parse(readFileSync(file, 'utf8')) as Enrolled;
// Dates went through JSON as text.
const enrolled: Enrolled = {
  ...stored,
  agents: stored.agents.map((agent) => ({ ...agent, notBefore: new Date(agent.notBefore), notAfter: new Date(agent.notAfter) })),
};
const connections: BrokerConnection[] = [];
const clients: grpc.Client[] = [];

process.on('message', async (message: Request) => {
  if (message.type === 'connect') {
    const slice = enrolled.agents.slice(message.start, message.end);
    if (message.kind === 'bare') connectEchoStreams(message.port, { ...enrolled, agents: slice }, clients);
    else {
      for (const identity of slice) {
        const connection = simulatedAgent(identity, enrolled, message.address);
        connections.push(connection);
        connection.start();
      }
    }
    process.send?.({ id: message.id });
  } else if (message.type === 'stop') {
    await Promise.all(connections.map((connection) => connection.stop()));
    for (const client of clients) client.close();
    process.send?.({ id: message.id });
    process.exit(0);
  }
});
process.send?.({ id: 0, ready: true });

import { RECONNECT_BACKOFF } from '../../agent/connection/backoff.ts';
import { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { Dispatcher } from '../../agent/dispatcher/dispatcher.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { FLEETMESH_VERSION, PROTOCOL_VERSION } from '../../shared/version.ts';
import { BENCH_SAMPLE } from '../fleet/bench-sample.ts';
import { readEnrolled } from '../mesh/bench-fleet.ts';

/**
 * One process of the reconnect bench's simulated fleet: the agents it is given
 * run the agent's real connection loop (backoff and all, each with its own
 * channel and TLS connection) against the broker's port, and every welcome is
 * reported to the bench with its wall-clock time, so the bench can tell the
 * old broker's welcomes from the new one's across processes.
 */

/** Agents `start` to `end` of the fleet preEnroll wrote to `file`, dialling the broker on `port`. */
export interface FleetSlice {
  type: 'start';
  port: number;
  file: string;
  start: number;
  end: number;
}

export type FleetRequest = FleetSlice | { type: 'cpu' } | { type: 'stop' };

export type FleetEvent = { type: 'connected'; name: string; atMs: number } | { type: 'cpu'; cpuUs: number } | { type: 'stopped' };

const send = (event: FleetEvent) => process.send?.(event);
const connections: BrokerConnection[] = [];

process.on('message', async (request: FleetRequest) => {
  if (request.type === 'cpu') {
    const usage = process.cpuUsage();
    send({ type: 'cpu', cpuUs: usage.user + usage.system });
  } else if (request.type === 'stop') {
    await Promise.all(connections.map((connection) => connection.stop()));
    send({ type: 'stopped' });
    process.disconnect();
  } else {
    const enrolled = readEnrolled(request.file);
    for (const agent of enrolled.agents.slice(request.start, request.end)) {
      const connection = new BrokerConnection({
        dataDir: '/nonexistent',
        identity: {
          ...agent,
          brokerAddress: `localhost:${request.port}`,
          caCertificatePem: enrolled.caCertificatePem,
          privateKeyPem: enrolled.keys.privateKeyPem,
        },
        dispatcher: new Dispatcher(silentLogger),
        hello: () => ({ agentVersion: FLEETMESH_VERSION, protocolVersion: PROTOCOL_VERSION, actions: [], name: agent.name }),
        sample: () => BENCH_SAMPLE,
        log: silentLogger,
        backoffBaseMs: RECONNECT_BACKOFF.baseMs,
        backoffCapMs: RECONNECT_BACKOFF.capMs,
      });
      // The time origin differs between processes; the wall clock they share is performance.timeOrigin + now().
      connection.on('connected', () => send({ type: 'connected', name: agent.name, atMs: performance.timeOrigin + performance.now() }));
      connections.push(connection);
      connection.start();
      // Started a few at a time, as a fleet comes up: dialling thousands in one turn of the loop starves this process's timers.
      if (connections.length % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
});

/**
 * A broker of the cluster benchmark, in a process of its own so its CPU time
 * and memory are its own: alone on SQLite, or one of several on PostgreSQL and
 * NATS. Driven over IPC by bench/cluster/cluster-bench.ts; a SIGKILL is how
 * the benchmark takes it away.
 *   run-ts cluster-broker-host.ts DATA_DIR PORT [STORE_URL BUS_URL BROKER_ID]
 * BUS_URL carries the bus's token (nats://TOKEN@HOST:PORT).
 */
import { createIdentity } from '../../broker/auth/identities.ts';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { fanOutRound } from '../fleet/fan-out-round.ts';

type Request = { id: number; type: 'stats'; gc?: boolean } | { id: number; type: 'fanout'; timeoutMs: number } | { id: number; type: 'stop' };

const [dataDir = '', port = '0', store, bus, brokerId] = process.argv.slice(2);
const broker = await Broker.start(
  inProcessBrokerOptions(dataDir, {
    grpcListen: `127.0.0.1:${port}`,
    ...(store && bus && brokerId ? { store, cluster: { url: bus, token: undefined, brokerId, beatIntervalMs: 1000 } } : {}),
  }),
  silentLogger,
);
// The identity the rounds run as: the brokers holding the agents authorise each relayed call for it.
const identity = await createIdentity(broker.store, { name: `bench-${brokerId ?? 'single'}`, level: 0 });
const authority = { identityId: identity.id, actionId: 'agent.info', confirmed: false };

/** CPU, memory and agents now; after a full collection when `gc` is set (the points figures are read at, not progress polls). */
function stats(gc = false) {
  if (gc) (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  return {
    cpu_us: cpu.user + cpu.system,
    rss_bytes: process.memoryUsage().rss,
    /** Agents whose stream this broker holds. */
    held: broker.registry.held().length,
    /** Agents this broker can call, wherever they are held (online or stale: the fan-out targets). */
    reachable: broker.registry.list().filter((h) => h.session).length,
  };
}

process.on('message', async (message: Request) => {
  if (message.type === 'stats') {
    process.send?.({ id: message.id, ...stats(message.gc) });
  } else if (message.type === 'fanout') {
    process.send?.({ id: message.id, ...(await fanOutRound(broker, message.timeoutMs, authority)) });
  } else if (message.type === 'stop') {
    await broker.stop();
    process.send?.({ id: message.id });
    process.exit(0);
  }
});
process.send?.({ id: 0, ready: true, port: broker.grpcPort });

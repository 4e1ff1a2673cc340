/**
 * A broker of the cluster benchmark, in a process of its own so its CPU time
 * and memory are its own: alone on SQLite, or one of several on PostgreSQL and
 * NATS. Driven over IPC by bench/cluster/cluster-bench.ts; a SIGKILL is how
 * the benchmark takes it away.
 *   run-ts cluster-broker-host.ts DATA_DIR PORT [STORE_URL BUS_URL BROKER_ID CA_KEY_SECRET CA_DIR]
 * BUS_URL carries the bus's token (nats://TOKEN@HOST:PORT); CA_KEY_SECRET
 * seals the fleet CA's key on the shared store, as --ca-key-secret-file does;
 * CA_DIR holds the CA the fleet was enrolled with (ca.crt, ca.key), which
 * every broker of the cluster is given, as --ca-cert-file and --ca-key-file.
 * With BENCH_BROKER_LOG=DIR each broker writes its info log to DIR/<broker id>.log
 * (the signer lease changing hands, brokers counted gone, streams refused),
 * and every 5 s a line of its own figures (agents held and reachable, the
 * admission gate's, the event loop's delay); without it the brokers log nothing.
 */
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createIdentity } from '../../broker/auth/identities.ts';
import { NO_BOOTSTRAP } from '../../broker/bootstrap/broker-bootstrap.ts';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { CA_CERT_FILE, CA_KEY_FILE } from '../../broker/pki/broker-authority.ts';
import { createLogger, type Logger, silentLogger } from '../../shared/log/logger.ts';
import { fanOutRound } from '../fleet/fan-out-round.ts';
import { gateFigures } from '../fleet/gate-figures.ts';
import { oneAddressFleetLimits } from '../fleet/one-address-fleet.ts';
import { loopDelay } from '../mesh/loop-delay.ts';

type Request = { id: number; type: 'stats'; gc?: boolean } | { id: number; type: 'fanout'; timeoutMs: number } | { id: number; type: 'stop' };

const [dataDir = '', port = '0', store, bus, brokerId, caKeySecret, caDir = ''] = process.argv.slice(2);
const given = (name: string) => readFileSync(join(caDir, name), 'utf8');
const options = inProcessBrokerOptions(dataDir, {
  grpcListen: `127.0.0.1:${port}`,
  ...(store && bus && brokerId
    ? {
        store,
        caKeySecret,
        bootstrap: { ...NO_BOOTSTRAP, ca: { certificatePem: given(CA_CERT_FILE), privateKeyPem: given(CA_KEY_FILE) } },
        cluster: { url: bus, token: undefined, brokerId, beatIntervalMs: 1000 },
      }
    : {}),
});
options.admissionLimits = oneAddressFleetLimits(options.admissionLimits);
/** The broker's log: silent, or info lines to a file of its own under BENCH_BROKER_LOG. */
function brokerLog(): Logger {
  const dir = process.env.BENCH_BROKER_LOG;
  if (!dir) return silentLogger;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${brokerId ?? 'single'}.log`);
  return createLogger({ level: 'info', format: 'text', write: (line) => appendFileSync(file, `${line}\n`) });
}
const log = brokerLog();
const broker = await Broker.start(options, log);
if (process.env.BENCH_BROKER_LOG) {
  const delay = loopDelay();
  setInterval(() => {
    const { p99_ms, max_ms } = delay();
    log.info('bench figures', { ...stats(), ...gateFigures(broker), loop_p99_ms: Math.round(p99_ms), loop_max_ms: Math.round(max_ms) });
  }, 5000).unref();
}
// The identity the rounds run as: the brokers holding the agents authorise each relayed call for it. One per process:
// the single broker started again after its SIGKILL finds the first one's in its data dir.
const name = `bench-${brokerId ?? 'single'}-${process.pid}`;
const identity = await createIdentity(broker.store, { name, level: 0 });
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
    process.send?.({ id: message.id, ...(await fanOutRound(broker, message.timeoutMs, { authority, caller: name })) });
  } else if (message.type === 'stop') {
    await broker.stop();
    process.send?.({ id: message.id });
    process.exit(0);
  }
});
process.send?.({ id: 0, ready: true, port: broker.grpcPort });

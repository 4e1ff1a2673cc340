/**
 * The broker under benchmark, from the build as it runs in production, in a
 * process of its own so that its CPU time and memory are its own. Driven over IPC by bench/mesh/mesh-bench.ts.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { writeHeapSnapshot } from 'node:v8';
import { loadDistBroker } from '../fleet/dist-broker.ts';
import { fanOutRound } from '../fleet/fan-out-round.ts';
import { gateFigures } from '../fleet/gate-figures.ts';
import { oneAddressFleetLimits } from '../fleet/one-address-fleet.ts';
import { loopDelay } from './loop-delay.ts';

type Request =
  | { id: number; type: 'stats'; gc?: boolean }
  | { id: number; type: 'fanout'; timeoutMs: number }
  | { id: number; type: 'profile-start' }
  | { id: number; type: 'profile-stop'; path: string }
  | { id: number; type: 'heap-snapshot'; path: string }
  | { id: number; type: 'stop' };

const dataDir = process.argv[2] ?? '';
const { Broker, inProcessBrokerOptions, silentLogger } = await loadDistBroker();
const options = inProcessBrokerOptions(dataDir);
options.admissionLimits = oneAddressFleetLimits(options.admissionLimits);
const broker = await Broker.start(options, silentLogger);
/** How late the broker's event loop runs, since the last stats. */
const delay = loopDelay();

/**
 * CPU, memory and connections now; after a full collection when `gc` is set
 * (the points the figures are read at). Progress polls do not collect: a full
 * collection of 10,000 agents' heap every poll was most of what the broker did.
 */
function stats(gc = false) {
  if (gc) (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  const hosts = broker.registry.list();
  return {
    cpu_us: cpu.user + cpu.system,
    rss_bytes: process.memoryUsage().rss,
    heap_used_bytes: process.memoryUsage().heapUsed,
    online: hosts.filter((h) => h.state === 'online').length,
    ...gateFigures(broker),
    loop_p99_ms: Math.round(delay().p99_ms),
  };
}

/** CPU profiles cover only what the bench asks for (the fan-out rounds), not start-up and connects. */
const inspector = new Session();
inspector.connect();

process.on('message', async (message: Request) => {
  if (message.type === 'profile-start') {
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.start');
    process.send?.({ id: message.id });
  } else if (message.type === 'profile-stop') {
    const { profile } = await inspector.post('Profiler.stop');
    writeFileSync(message.path, JSON.stringify(profile));
    process.send?.({ id: message.id });
  } else if (message.type === 'heap-snapshot') {
    writeHeapSnapshot(message.path);
    process.send?.({ id: message.id });
  } else if (message.type === 'stats') {
    process.send?.({ id: message.id, ...stats(message.gc) });
  } else if (message.type === 'fanout') {
    process.send?.({ id: message.id, ...(await fanOutRound(broker, message.timeoutMs)) });
  } else if (message.type === 'stop') {
    await broker.stop();
    process.send?.({ id: message.id });
    process.exit(0);
  }
});
process.send?.({ id: 0, ready: true, port: broker.grpcPort, pin: broker.authority.pin });

/**
 * The broker under soak, in a process of its own so that its memory, handles
 * and event loop are its own. Driven over IPC by bench/soak/soak.ts.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createIdentity } from '../../broker/auth/identities.ts';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { oneAddressFleetLimits } from '../fleet/one-address-fleet.ts';
import { startLoopWatchdog } from './loop-watchdog.ts';

type Request = { id: number; type: 'sample' } | { id: number; type: 'identity'; name: string } | { id: number; type: 'stop' };

const dataDir = process.argv[2] ?? '';
const options = inProcessBrokerOptions(dataDir);
options.admissionLimits = oneAddressFleetLimits(options.admissionLimits);
const broker = await Broker.start(options, silentLogger);
/** Online agents the broker marked stale (their heartbeats stopped coming in time), and agents whose stream ended. */
let lateHeartbeats = 0;
let dropped = 0;
broker.registry.on('state', (host, previous) => {
  if (previous === 'online' && host.state === 'stale') lateHeartbeats += 1;
  if (previous !== 'offline' && host.state === 'offline') dropped += 1;
});
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
// SOAK_LOOP_WATCHDOG=FILE: where the loop stood while it was held past 2 s, one hold a line (loop-watchdog.ts).
const watchdogFile = process.env.SOAK_LOOP_WATCHDOG;
const stopWatchdog = watchdogFile ? startLoopWatchdog(watchdogFile) : async () => {};

/** Memory after a full collection (so growth is what stays), the loop's delay since the last sample, and live handles. */
function sample() {
  (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  const loopP99Ms = loopDelay.percentile(99) / 1e6;
  loopDelay.reset();
  return {
    rss_bytes: memory.rss,
    heap_used_bytes: memory.heapUsed,
    loop_delay_p99_ms: loopP99Ms,
    open_handles: process.getActiveResourcesInfo().length,
    online: broker.registry.list().filter((h) => h.state === 'online').length,
    late_heartbeats: lateHeartbeats,
    dropped,
  };
}

process.on('message', async (message: Request) => {
  if (message.type === 'sample') {
    process.send?.({ id: message.id, ...sample() });
  } else if (message.type === 'identity') {
    process.send?.({ id: message.id, token: (await createIdentity(broker.store, { name: message.name, level: 1 })).token });
  } else if (message.type === 'stop') {
    loopDelay.disable();
    await stopWatchdog();
    await broker.stop();
    process.send?.({ id: message.id });
    process.exit(0);
  }
});
// The bench that started us is gone: nothing else would stop this broker.
process.on('disconnect', () => process.exit(1));
process.send?.({ id: 0, ready: true, mcp_url: broker.mcpUrl, port: broker.grpcPort });

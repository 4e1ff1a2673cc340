/**
 * The broker under benchmark, in a process of its own so that its CPU time and
 * memory are its own. Driven over IPC by bench/mesh/mesh-bench.ts.
 */
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { silentLogger } from '../../shared/log/logger.ts';

type Request = { id: number; type: 'stats' } | { id: number; type: 'fanout'; timeoutMs: number } | { id: number; type: 'stop' };

const dataDir = process.argv[2] ?? '';
const broker = await Broker.start(inProcessBrokerOptions(dataDir), silentLogger);

function stats() {
  (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  const hosts = broker.registry.list();
  return {
    cpu_us: cpu.user + cpu.system,
    rss_bytes: process.memoryUsage().rss,
    heap_used_bytes: process.memoryUsage().heapUsed,
    online: hosts.filter((h) => h.state === 'online').length,
  };
}

process.on('message', async (message: Request) => {
  if (message.type === 'stats') {
    process.send?.({ id: message.id, ...stats() });
  } else if (message.type === 'fanout') {
    const targets = broker.registry.list().filter((h) => h.session);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const outcomes = await broker.fanOut(targets, { action: 'agent.info', params: {}, timeoutMs: message.timeoutMs, caller: 'bench' });
    const durationMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    process.send?.({
      id: message.id,
      duration_ms: durationMs,
      cpu_us: cpu.user + cpu.system,
      ok: outcomes.filter((o) => o.outcome.ok).length,
      total: outcomes.length,
    });
  } else if (message.type === 'stop') {
    await broker.stop();
    process.send?.({ id: message.id });
    process.exit(0);
  }
});
process.send?.({ id: 0, ready: true, port: broker.grpcPort, pin: broker.authority.pin });

/**
 * The broker of the reconnect benchmark (from the build, as it runs in
 * production), in a process of its own so its CPU
 * time is its own: listens on the port given (0 the first time), says when it
 * is listening, answers `stats` over IPC, and stops cleanly on SIGTERM (which
 * is what tells its agents when to come back).
 */
import { performance } from 'node:perf_hooks';
import { loadDistBroker } from '../fleet/dist-broker.ts';

const [dataDir = '', port = '0', sources = 'hosts'] = process.argv.slice(2);
const { Broker, inProcessBrokerOptions, silentLogger } = await loadDistBroker();
const { admissionLimits } = inProcessBrokerOptions(dataDir);
// The simulated fleet dials from one address, which the gate takes for a site behind one NAT and holds 2,048
// connections of at once. A fleet of hosts dials from as many addresses: unless told the fleet is one site
// (`nat`), this broker lets the one address hold as many as the gate holds in all.
const limits = sources === 'nat' ? admissionLimits : { ...admissionLimits, pendingPerSource: admissionLimits.pendingTotal };
const broker = await Broker.start(inProcessBrokerOptions(dataDir, { grpcListen: `127.0.0.1:${port}`, admissionLimits: limits }), silentLogger);

process.on('message', (message: { id: number; type: 'stats' }) => {
  const cpu = process.cpuUsage();
  const online = broker.registry.list().filter((host) => host.state === 'online').length;
  const loop = performance.eventLoopUtilization();
  process.send?.({ id: message.id, cpu_us: cpu.user + cpu.system, online, loop_active_ms: loop.active, loop_idle_ms: loop.idle });
});
process.once('SIGTERM', () => {
  void broker.stop().then(() => process.exit(0));
});
const cpu = process.cpuUsage();
const loop = performance.eventLoopUtilization();
process.send?.({ id: 0, port: broker.grpcPort, cpu_us: cpu.user + cpu.system, loop_active_ms: loop.active, loop_idle_ms: loop.idle });

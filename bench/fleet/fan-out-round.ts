import type { CallAuthority } from '../../broker/agents/agent-session.ts';
import type { Broker } from '../../broker/broker.ts';

/**
 * One bench round on a broker host: `agent.info` to every agent the broker can
 * call (held here or, in a cluster, by another broker), timed, with the CPU
 * the broker process spent on it. In a cluster, `authority` names the
 * identity the other brokers authorise their agents' calls for.
 */
export async function fanOutRound(broker: Pick<Broker, 'registry' | 'fanOut'>, timeoutMs: number, authority?: CallAuthority) {
  const targets = broker.registry.list().filter((h) => h.session);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const outcomes = await broker.fanOut(targets, { action: 'agent.info', params: {}, timeoutMs, caller: 'bench', ...(authority ? { authority } : {}) });
  const durationMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { duration_ms: durationMs, cpu_us: cpu.user + cpu.system, ok: outcomes.filter((o) => o.outcome.ok).length, total: outcomes.length };
}

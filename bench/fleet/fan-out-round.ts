import type { CallAuthority } from '../../broker/agents/agent-session.ts';
import type { Broker } from '../../broker/broker.ts';

/**
 * One bench round on a broker host: `agent.info` to every agent the broker can
 * call (held here or, in a cluster, by another broker), timed, with the CPU
 * the broker process spent on it. In a cluster, `as` names the identity (its
 * id and name) the other brokers authorise their agents' calls for.
 */
export async function fanOutRound(broker: Pick<Broker, 'registry' | 'fanOut'>, timeoutMs: number, as?: { authority: CallAuthority; caller: string }) {
  const targets = broker.registry.list().filter((h) => h.session);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const outcomes = await broker.fanOut(targets, {
    action: 'agent.info',
    params: {},
    timeoutMs,
    caller: as?.caller ?? 'bench',
    ...(as ? { authority: as.authority } : {}),
  });
  const durationMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const failed = outcomes.find((o) => !o.outcome.ok)?.outcome;
  // What the first failed call said, so a bench that counts failures can say why.
  const firstError = failed && !failed.ok ? `${failed.error.code}: ${failed.error.message}` : undefined;
  return {
    duration_ms: durationMs,
    cpu_us: cpu.user + cpu.system,
    ok: outcomes.filter((o) => o.outcome.ok).length,
    total: outcomes.length,
    first_error: firstError,
  };
}

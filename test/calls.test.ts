import { afterEach, describe, expect, it } from 'vitest';
import type { Host } from '../broker/agents/agent-registry.ts';
import { captureLogger } from './harness/capture-logger.ts';
import { CliProcess } from './harness/cli-process.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

function host(fleet: TestFleet, name: string): Host {
  const found = fleet.broker.registry.find(name);
  if (!found) throw new Error(`no host ${name}`);
  return found;
}

describe('calls from the broker to agents', () => {
  let fleet: TestFleet;
  const processes: CliProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await fleet?.stop();
  });

  it('answers agent.info with version, uptime, collectors, labels and facts', async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('info', { labels: { role: 'web' } });
    const [result] = await fleet.broker.fanOut([host(fleet, 'info')], { action: 'agent.info', params: {}, timeoutMs: 5000, caller: 'test' });
    expect(result?.outcome.ok).toBe(true);
    const payload = result?.outcome.ok ? (result.outcome.payload as Record<string, unknown>) : {};
    expect(payload).toMatchObject({ name: 'info', version: expect.any(String), labels: { role: 'web' }, collectors: [] });
    expect(payload.uptime_s).toBeGreaterThanOrEqual(0);
    expect(payload.facts).toMatchObject({ hostname: expect.any(String), arch: expect.any(String), kernel: expect.any(String), cpu_cores: expect.any(Number) });
  });

  it('returns deadline_exceeded for an agent that never answers while the others answer', async () => {
    fleet = await startTestFleet({ heartbeatIntervalMs: 60_000 });
    await fleet.addAgent('fast-1');
    await fleet.addAgent('fast-2');
    const frozen = new CliProcess(await fleet.agentArgs('frozen'));
    processes.push(frozen);
    await waitFor(() => fleet.broker.registry.find('frozen')?.state === 'online', { what: 'frozen online' });
    frozen.signal('SIGSTOP');

    const order: string[] = [];
    const outcomes = await fleet.broker.fanOut([host(fleet, 'frozen'), host(fleet, 'fast-1'), host(fleet, 'fast-2')], {
      action: 'agent.info',
      params: {},
      timeoutMs: 1500,
      caller: 'test',
      onHostDone: (done) => order.push(done.host.name),
    });
    const byName = Object.fromEntries(outcomes.map((o) => [o.host.name, o.outcome]));
    expect(byName['fast-1']?.ok).toBe(true);
    expect(byName['fast-2']?.ok).toBe(true);
    expect(byName.frozen).toMatchObject({ ok: false, error: { code: 'deadline_exceeded' } });
    // The answering hosts settled first; the frozen one only at the deadline.
    expect(order.slice(0, 2).sort()).toEqual(['fast-1', 'fast-2']);
    expect(order[2]).toBe('frozen');
  });

  it('sends Cancel down to the agent, which stops the work', async () => {
    fleet = await startTestFleet();
    const { log, lines } = captureLogger();
    const agent = await fleet.addAgent('cancellable', { log });
    const controller = new AbortController();
    const chunks: unknown[] = [];
    const pending = fleet.broker.fanOut([host(fleet, 'cancellable')], {
      action: 'agent.info',
      params: { watch_ms: 30_000, interval_ms: 100 },
      timeoutMs: 40_000,
      caller: 'test',
      signal: controller.signal,
      onChunk: (_host, payload) => chunks.push(payload),
    });
    await waitFor(() => chunks.length >= 2, { what: 'two chunks' });
    expect(agent.dispatcher.inFlight).toBe(1);
    controller.abort();
    const [outcome] = await pending;
    expect(outcome?.outcome.ok).toBe(false);
    await waitFor(() => lines.some((line) => line.message === 'call cancelled'), { what: 'the agent logging the cancellation' });
    await waitFor(() => agent.dispatcher.inFlight === 0, { what: 'the agent to stop the work' });
    const seen = chunks.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(chunks.length).toBe(seen);
  });

  it('streams chunks in order before the final result', async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('streamer');
    // Collected, then checked after the call: an assertion failing inside onChunk would be swallowed by the session.
    const chunks: { payload: unknown; seq: number }[] = [];
    const [result] = await fleet.broker.fanOut([host(fleet, 'streamer')], {
      action: 'agent.info',
      params: { watch_ms: 800, interval_ms: 100 },
      timeoutMs: 5000,
      caller: 'test',
      onChunk: (_host, payload, seq) => chunks.push({ payload, seq }),
    });
    expect(result?.outcome.ok).toBe(true);
    expect(chunks.length).toBeGreaterThanOrEqual(5);
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    for (const { payload } of chunks) expect(payload).toMatchObject({ uptime_s: expect.any(Number), sample: expect.any(Object) });
  });

  it('gets unsupported from an agent that does not know the action', async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('old');
    const target = host(fleet, 'old');
    // The broker knows from Hello that the agent lacks it, and says so without asking…
    const [local] = await fleet.broker.fanOut([target], { action: 'docker.teleport', params: {}, timeoutMs: 2000, caller: 'test' });
    expect(local?.outcome).toMatchObject({ ok: false, error: { code: 'unsupported' } });
    // …and the agent itself answers unsupported when asked anyway.
    const direct = await target.session?.call({ action: 'docker.teleport', params: {}, deadlineUnixMs: Date.now() + 2000, caller: 'test' });
    expect(direct).toMatchObject({ ok: true, errors: [{ code: 'unsupported' }] });
  });

  it('refuses parameters the action does not accept, on the agent', async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('strict');
    const [result] = await fleet.broker.fanOut([host(fleet, 'strict')], { action: 'agent.info', params: { watch_ms: -5 }, timeoutMs: 2000, caller: 'test' });
    expect(result?.outcome).toMatchObject({ ok: true, errors: [{ code: 'invalid_argument' }] });
  });

  it('reports agent_offline for an enrolled agent that is not connected', async () => {
    fleet = await startTestFleet();
    const agent = await fleet.addAgent('gone');
    await fleet.stopAgent(agent);
    await waitFor(() => fleet.broker.registry.find('gone')?.state === 'offline');
    const [result] = await fleet.broker.fanOut([host(fleet, 'gone')], { action: 'agent.info', params: {}, timeoutMs: 2000, caller: 'test' });
    expect(result?.outcome).toMatchObject({ ok: false, error: { code: 'agent_offline' } });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../broker/agents/agent-registry.ts';
import { captureLogger } from './harness/capture-logger.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

/**
 * Calls over the real agent stream (gRPC, mutual TLS) to agents started as
 * they run: what the fan-out does with answers, deadlines, unknown actions and
 * offline hosts is tested on linked hosts in broker/fanout/fan-out.test.ts.
 */
describe('calls from the broker to agents over the agent stream', () => {
  let fleet: TestFleet;
  beforeAll(async () => {
    fleet = await startTestFleet();
  });
  afterAll(async () => {
    await fleet?.stop();
  });

  function host(name: string): Host {
    const found = fleet.broker.registry.find(name);
    if (!found) throw new Error(`no host ${name}`);
    return found;
  }

  it('answers agent.info with version, uptime, collectors, labels and facts', async () => {
    await fleet.addAgent('info', { labels: { role: 'web' } });
    const [result] = await fleet.broker.fanOut([host('info')], { action: 'agent.info', params: {}, timeoutMs: 5000, caller: 'test' });
    expect(result?.outcome.ok).toBe(true);
    const payload = result?.outcome.ok ? (result.outcome.payload as Record<string, unknown>) : {};
    expect(payload).toMatchObject({ name: 'info', version: expect.any(String), labels: { role: 'web' }, collectors: [] });
    expect(payload.uptime_s).toBeGreaterThanOrEqual(0);
    expect(payload.facts).toMatchObject({ hostname: expect.any(String), arch: expect.any(String), kernel: expect.any(String), cpu_cores: expect.any(Number) });
  });

  it('streams chunks in order before the final result', async () => {
    await fleet.addAgent('streamer');
    // Collected, then checked after the call: an assertion failing inside onChunk would be swallowed by the session.
    const chunks: { payload: unknown; seq: number }[] = [];
    const [result] = await fleet.broker.fanOut([host('streamer')], {
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

  it('sends Cancel down to the agent, which stops the work', async () => {
    const { log, lines } = captureLogger();
    const agent = await fleet.addAgent('cancellable', { log });
    const controller = new AbortController();
    const chunks: unknown[] = [];
    const pending = fleet.broker.fanOut([host('cancellable')], {
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
});

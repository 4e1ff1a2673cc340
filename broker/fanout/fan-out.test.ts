import { afterEach, describe, expect, it } from 'vitest';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { captureLogger } from '../../test/harness/capture-logger.ts';
import { type LinkedAction, type LinkedFleet, startLinkedFleet } from '../../test/harness/linked-fleet.ts';
import { waitFor } from '../../test/harness/wait.ts';
import type { Host } from '../agents/agent-registry.ts';
import { fanOut } from './fan-out.ts';

/** Waits `ms`, or less when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** agent.info as an agent answers it: with watch_ms, a sample streamed every interval_ms first, then all of them. */
function info(name: string): LinkedAction {
  return {
    action: agentInfo,
    handler: async (params, context) => {
      const { watch_ms: watchMs = 0, interval_ms: intervalMs = 1000 } = params as { watch_ms?: number; interval_ms?: number };
      const samples: { uptime_s: number; sample: Record<string, unknown> }[] = [];
      const until = Date.now() + watchMs;
      while (Date.now() < until && !context.signal.aborted) {
        const streamed = { uptime_s: samples.length, sample: { cpu_percent: 1 } };
        samples.push(streamed);
        context.emit(streamed);
        await pause(Math.min(intervalMs, Math.max(0, until - Date.now())), context.signal);
      }
      context.signal.throwIfAborted();
      return {
        payload: {
          agent_id: `agent-${name}`,
          name,
          version: 'linked',
          protocol_version: 1,
          uptime_s: samples.length,
          started_at_unix_ms: 0,
          collectors: [],
          labels: {},
          facts: {},
          sample: null,
          certificate_not_after_unix_ms: 0,
          ...(watchMs > 0 ? { samples } : {}),
        },
      };
    },
  };
}

describe('a fan-out to linked hosts', () => {
  let fleet: LinkedFleet;
  afterEach(async () => {
    await fleet?.stop();
  });

  function host(name: string): Host {
    const found = fleet.registry.find(name);
    if (!found) throw new Error(`no host ${name}`);
    return found;
  }

  it('returns deadline_exceeded for a host that never answers while the others answer, the answering ones settling first', async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('fast-1', [info('fast-1')]);
    await fleet.addHost('fast-2', [info('fast-2')]);
    (await fleet.addHost('frozen', [info('frozen')])).freeze();
    const order: string[] = [];
    const outcomes = await fanOut([host('frozen'), host('fast-1'), host('fast-2')], {
      action: agentInfo.id,
      params: {},
      timeoutMs: 300,
      caller: 'test',
      onHostDone: (done) => order.push(done.host.name),
    });
    const byName = Object.fromEntries(outcomes.map((o) => [o.host.name, o.outcome]));
    expect(byName['fast-1']?.ok).toBe(true);
    expect(byName['fast-2']?.ok).toBe(true);
    expect(byName.frozen).toMatchObject({ ok: false, error: { code: 'deadline_exceeded' } });
    expect(order.slice(0, 2).sort()).toEqual(['fast-1', 'fast-2']);
    expect(order[2]).toBe('frozen');
  });

  it('streams chunks in order before the final result', async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('streamer', [info('streamer')]);
    // Collected, then checked after the call: an assertion failing inside onChunk would be swallowed by the session.
    const chunks: { payload: unknown; seq: number }[] = [];
    const [result] = await fanOut([host('streamer')], {
      action: agentInfo.id,
      params: { watch_ms: 450, interval_ms: 100 },
      timeoutMs: 5000,
      caller: 'test',
      onChunk: (_host, payload, seq) => chunks.push({ payload, seq }),
    });
    expect(result?.outcome).toMatchObject({ ok: true, errors: [] });
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    for (const { payload } of chunks) expect(payload).toMatchObject({ uptime_s: expect.any(Number), sample: expect.any(Object) });
    const final = result?.outcome.ok ? (result.outcome.payload as { samples: unknown[] }) : { samples: [] };
    expect(final.samples).toHaveLength(chunks.length);
  });

  it('sends Cancel down to the host when the caller aborts, and the host stops the work', async () => {
    fleet = await startLinkedFleet();
    const { log, lines } = captureLogger();
    const linked = await fleet.addHost('cancellable', [info('cancellable')], {}, { log });
    const controller = new AbortController();
    const chunks: unknown[] = [];
    const pending = fanOut([host('cancellable')], {
      action: agentInfo.id,
      params: { watch_ms: 30_000, interval_ms: 100 },
      timeoutMs: 40_000,
      caller: 'test',
      signal: controller.signal,
      onChunk: (_host, payload) => chunks.push(payload),
    });
    await waitFor(() => chunks.length >= 2, { what: 'two chunks' });
    expect(linked.dispatcher.inFlight).toBe(1);
    controller.abort();
    const [outcome] = await pending;
    expect(outcome?.outcome.ok).toBe(false);
    await waitFor(() => linked.sent.some((frame) => frame.frame.case === 'cancel'), { what: 'the Cancel frame' });
    await waitFor(() => lines.some((line) => line.message === 'call cancelled'), { what: 'the host logging the cancellation' });
    await waitFor(() => linked.dispatcher.inFlight === 0, { what: 'the host to stop the work' });
    // Stopped work streams nothing more: a chunk sent after the cancel would show within three intervals.
    const seen = chunks.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(chunks.length).toBe(seen);
  });

  it('gets unsupported for an action the host does not know, from its Hello without asking and from the host when asked anyway', async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('old', [info('old')]);
    const target = host('old');
    const [local] = await fanOut([target], { action: 'docker.teleport', params: {}, timeoutMs: 2000, caller: 'test' });
    expect(local?.outcome).toMatchObject({ ok: false, error: { code: 'unsupported' } });
    const direct = await target.session?.call({ action: 'docker.teleport', params: {}, deadlineUnixMs: Date.now() + 2000, caller: 'test' });
    expect(direct).toMatchObject({ ok: true, errors: [{ code: 'unsupported' }] });
  });

  it('has parameters the action does not accept refused by the host', async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('strict', [info('strict')]);
    const [result] = await fanOut([host('strict')], { action: agentInfo.id, params: { watch_ms: -5 }, timeoutMs: 2000, caller: 'test' });
    expect(result?.outcome).toMatchObject({ ok: true, errors: [{ code: 'invalid_argument' }] });
  });

  it('reports agent_offline for an enrolled host that is not connected', async () => {
    fleet = await startLinkedFleet();
    (await fleet.addHost('gone', [info('gone')])).disconnect();
    expect(host('gone').state).toBe('offline');
    const [result] = await fanOut([host('gone')], { action: agentInfo.id, params: {}, timeoutMs: 2000, caller: 'test' });
    expect(result?.outcome).toMatchObject({ ok: false, error: { code: 'agent_offline' } });
  });
});

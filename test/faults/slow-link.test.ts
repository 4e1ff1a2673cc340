import { afterEach, describe, expect, it } from 'vitest';
import type { HostOutcome } from '../../broker/fanout/fan-out.ts';
import type { AgentState } from '../../broker/store/agents-table.ts';
import { TcpProxy } from '../harness/tcp-proxy.ts';
import { startTestFleet, type TestFleet } from '../harness/test-fleet.ts';
import { waitFor } from '../harness/wait.ts';

/** Three agents dial the broker directly and one through a proxy that slows, stalls or half-closes its link. */
describe('a slow, stalled or half-open link to one agent', () => {
  let fleet: TestFleet | undefined;
  let proxy: TcpProxy | undefined;

  afterEach(async () => {
    await fleet?.stop();
    await proxy?.stop();
    fleet = undefined;
    proxy = undefined;
  });

  async function start(): Promise<{ fleet: TestFleet; proxy: TcpProxy }> {
    fleet = await startTestFleet({ heartbeatIntervalMs: 500 });
    proxy = new TcpProxy({ host: '127.0.0.1', port: fleet.broker.grpcPort });
    const port = await proxy.start();
    await fleet.addAgent('far', { brokerAddress: `localhost:${port}` });
    for (const name of ['near-1', 'near-2', 'near-3']) await fleet.addAgent(name);
    return { fleet, proxy };
  }

  /** One agent.info to the whole fleet, with the order in which hosts settled. */
  async function fanOutInOrder(current: TestFleet, timeoutMs: number): Promise<{ outcomes: HostOutcome[]; order: string[] }> {
    const order: string[] = [];
    const outcomes = await current.broker.fanOut(current.broker.registry.list(), {
      action: 'agent.info',
      params: {},
      timeoutMs,
      caller: 'slow-link-test',
      onHostDone: (outcome) => order.push(outcome.host.name),
    });
    return { outcomes, order };
  }

  it('answers for the near agents before the far one when its link adds latency, and still has the far one answer', async () => {
    const { fleet, proxy } = await start();
    proxy.setLatency(1500);
    const { outcomes, order } = await fanOutInOrder(fleet, 20_000);
    expect(outcomes.every((o) => o.outcome.ok)).toBe(true);
    expect(order.at(-1)).toBe('far');
  });

  it('fails only the stalled agent, by its deadline, and the others answer without waiting for it', async () => {
    const { fleet, proxy } = await start();
    proxy.stall();
    const { outcomes, order } = await fanOutInOrder(fleet, 1200);
    const byName = new Map(outcomes.map((o) => [o.host.name, o.outcome]));
    const far = byName.get('far');
    expect(far?.ok).toBe(false);
    // By its deadline, or sooner if the heartbeat grace ran out first on a busy machine.
    if (far && !far.ok) expect(['deadline_exceeded', 'agent_disconnected']).toContain(far.error.code);
    for (const name of ['near-1', 'near-2', 'near-3']) expect(byName.get(name)?.ok, name).toBe(true);
    expect(order.at(-1)).toBe('far');
    proxy.resume();
  });

  it('makes an agent whose link went half-open stale, then offline after the grace, and has it back once the link heals', async () => {
    const { fleet, proxy } = await start();
    const states: AgentState[] = [];
    fleet.broker.registry.on('state', (host, previous) => {
      if (host.name === 'far' && host.state !== previous) states.push(host.state);
    });
    // The broker's side stays open and silent: only the missing heartbeats tell.
    proxy.breakHalfOpen();
    const host = fleet.broker.registry.find('far');
    const outcome = await host?.session?.call({ action: 'agent.info', params: {}, deadlineUnixMs: Date.now() + 1000, caller: 'slow-link-test' });
    expect(outcome).toMatchObject({ ok: false });
    await waitFor(() => states.includes('offline'), { what: 'far offline', timeoutMs: 30_000 });
    expect(states).toEqual(['stale', 'offline']);
    const { outcomes } = await fanOutInOrder(fleet, 5000);
    expect(outcomes.filter((o) => o.outcome.ok).map((o) => o.host.name)).toEqual(['near-1', 'near-2', 'near-3']);

    proxy.heal();
    await waitFor(() => fleet.broker.registry.find('far')?.state === 'online', { what: 'far back online', timeoutMs: 30_000 });
  });
});

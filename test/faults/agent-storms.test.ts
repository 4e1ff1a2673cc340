import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../../broker/agents/agent-registry.ts';
import type { AgentState } from '../../broker/store/agents-table.ts';
import { CliProcess } from '../harness/cli-process.ts';
import { startTestFleet, type TestFleet } from '../harness/test-fleet.ts';
import { waitFor } from '../harness/wait.ts';

const FLEET_SIZE = 8;
/** A quarter of the fleet at once. */
const STORM_SIZE = FLEET_SIZE / 4;

/** Agent processes, a quarter of them stopped or killed at once. */
describe('storms of stopped and killed agents', () => {
  let fleet: TestFleet;
  const agents = new Map<string, CliProcess>();
  const states = new Map<string, AgentState[]>();

  const names = Array.from({ length: FLEET_SIZE }, (_, i) => `storm-${i}`);
  const hosts = () => names.map((name) => fleet.broker.registry.find(name) as Host);
  const allOnline = () => hosts().every((host) => host?.state === 'online');

  beforeAll(async () => {
    fleet = await startTestFleet({ heartbeatIntervalMs: 500 });
    fleet.broker.registry.on('state', (host, previous) => {
      if (host.state !== previous) states.get(host.name)?.push(host.state);
    });
    for (const name of names) {
      agents.set(name, new CliProcess(await fleet.agentArgs(name)));
      states.set(name, []);
    }
    await waitFor(allOnline, { what: 'the whole fleet online', timeoutMs: 120_000 });
  });

  afterAll(async () => {
    await Promise.all([...agents.values()].map((agent) => agent.stop()));
    await fleet?.stop();
  });

  it('makes every SIGSTOPped agent stale before offline, keeps the others online and answering, and takes them back on SIGCONT', async () => {
    const stopped = names.slice(0, STORM_SIZE);
    const running = names.slice(STORM_SIZE);
    for (const name of names) states.set(name, []);
    for (const name of stopped) agents.get(name)?.signal('SIGSTOP');

    const outcomes = await fleet.broker.fanOut(hosts(), { action: 'agent.info', params: {}, timeoutMs: 2000, caller: 'storm-test' });
    for (const { host, outcome } of outcomes) {
      if (running.includes(host.name)) expect(outcome.ok, `${host.name} answers`).toBe(true);
      else expect(outcome).toMatchObject({ ok: false });
    }

    await waitFor(() => stopped.every((name) => fleet.broker.registry.find(name)?.state === 'offline'), {
      what: 'the stopped agents offline',
      timeoutMs: 30_000,
    });
    for (const name of stopped) expect(states.get(name), name).toEqual(['stale', 'offline']);
    for (const name of running) expect(states.get(name), name).toEqual([]);

    for (const name of stopped) agents.get(name)?.signal('SIGCONT');
    await waitFor(allOnline, { what: 'the whole fleet back online', timeoutMs: 60_000 });
  });

  it('names the agents SIGKILLed mid-call as disconnected and gives the others their answers', async () => {
    await waitFor(allOnline, { what: 'the whole fleet online', timeoutMs: 60_000 });
    const killed = names.slice(-STORM_SIZE);
    // Stopped first, so the call is surely in flight on them when they die.
    for (const name of killed) agents.get(name)?.signal('SIGSTOP');
    const pending = fleet.broker.fanOut(hosts(), { action: 'agent.info', params: {}, timeoutMs: 45_000, caller: 'storm-test' });
    await waitFor(() => killed.every((name) => (fleet.broker.registry.find(name)?.session?.inFlight ?? 0) > 0), { what: 'the calls in flight' });
    for (const name of killed) agents.get(name)?.signal('SIGKILL');

    const outcomes = await pending;
    expect(outcomes).toHaveLength(FLEET_SIZE);
    for (const { host, outcome } of outcomes) {
      if (killed.includes(host.name)) {
        // Settled by the stream's end, not by waiting out the deadline.
        expect(outcome, host.name).toMatchObject({ ok: false, error: { code: 'agent_disconnected' } });
      } else {
        expect(outcome.ok, `${host.name} answers`).toBe(true);
      }
    }
    for (const name of killed) {
      await agents.get(name)?.exited;
      agents.delete(name);
    }
  });
});

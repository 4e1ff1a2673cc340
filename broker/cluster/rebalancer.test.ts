import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { AgentSession } from '../agents/agent-session.ts';
import { Rebalancer } from './rebalancer.ts';

interface FakeSession {
  heldBy: string | undefined;
  inFlight: number;
  sent: { delayMs: number; address: string }[];
  closed: boolean;
  send(frame: { case: string; value: { delayMs: number; address: string } }): boolean;
  close(): void;
}

/** A registry holding `here` agents itself (one of them busy) and the given numbers on other brokers. */
function fleet(here: number, elsewhere: Record<string, number>) {
  const sessions: FakeSession[] = [];
  const session = (heldBy: string | undefined, inFlight = 0): FakeSession => ({
    heldBy,
    inFlight,
    sent: [],
    closed: false,
    send(frame) {
      this.sent.push({ delayMs: frame.value.delayMs, address: frame.value.address });
      return true;
    },
    close() {
      this.closed = true;
    },
  });
  const hosts: { session: FakeSession }[] = [];
  for (let i = 0; i < here; i++) {
    const local = session(undefined, i === 0 ? 1 : 0);
    sessions.push(local);
    hosts.push({ session: local });
  }
  for (const [broker, count] of Object.entries(elsewhere)) for (let i = 0; i < count; i++) hosts.push({ session: session(broker) });
  const registry = {
    list: () => hosts as unknown as Host[],
    localSessions: () => sessions.filter((s) => !s.closed) as unknown as AgentSession[],
  } satisfies Pick<AgentRegistry, 'list' | 'localSessions'>;
  return { registry, sessions };
}

/** Beats until the rebalancer acts (it waits a few beats first, to know the cluster). */
function beats(rebalancer: Rebalancer, alive: string[], addresses: Map<string, string>, count = 4) {
  for (let i = 0; i < count; i++) rebalancer.beat(alive, addresses, 'a');
}

describe('evening out agents over the brokers', () => {
  it('asks idle agents over the fair share to move to the brokers holding the fewest, at the addresses those brokers gave', () => {
    const { registry, sessions } = fleet(12, { b: 6, c: 0 });
    beats(
      new Rebalancer(registry, silentLogger),
      ['a', 'b', 'c'],
      new Map([
        ['b', 'b.example:7443'],
        ['c', 'c.example:7443'],
      ]),
    );
    const moved = sessions.filter((s) => s.closed);
    // Fair share: 18 / 3 = 6; a holds 12, so 6 move, all to c (b already holds its share); the busy one stays.
    expect(moved).toHaveLength(6);
    expect(moved.flatMap((s) => s.sent.map((sent) => sent.address))).toEqual(Array(6).fill('c.example:7443'));
    expect(sessions[0]?.closed).toBe(false);
  });

  it('moves nobody when the difference is small, or no other broker said where agents reach it', () => {
    const small = fleet(5, { b: 4, c: 3 });
    beats(
      new Rebalancer(small.registry, silentLogger),
      ['a', 'b', 'c'],
      new Map([
        ['b', 'b:1'],
        ['c', 'c:1'],
      ]),
    );
    expect(small.sessions.filter((s) => s.closed)).toEqual([]);
    const silent = fleet(12, { b: 0 });
    beats(new Rebalancer(silent.registry, silentLogger), ['a', 'b'], new Map());
    expect(silent.sessions.filter((s) => s.closed)).toEqual([]);
  });
});

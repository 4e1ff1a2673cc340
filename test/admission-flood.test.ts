import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectFlood } from './harness/connect-flood.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { nextEvent, waitFor } from './harness/wait.ts';

/**
 * A flood of bare TCP connects (no TLS hello, each held for up to 2 s) at
 * 1,500 a second from 127.0.0.2, another host as far as the broker can tell,
 * at the agents' port. It has run for about five seconds, long enough for a
 * global line of turns to hold an arrival for more than 30 s, before the
 * agents below dial.
 */
const FLOOD = { from: '127.0.0.2', perSecond: 1500, holdMs: 2000 };
const FLOOD_BEFORE_DIALS = 7500;

describe('the agents port under a bare-connect flood from another address', () => {
  let fleet: TestFleet;
  let flood: ConnectFlood | undefined;
  beforeAll(async () => {
    fleet = await startTestFleet();
  });
  afterAll(async () => {
    await flood?.stop();
    await fleet?.stop();
  });

  it('takes back an agent whose stream was cut, and a new agent enrolls, while the flood goes on', async () => {
    const steady = await fleet.addAgent('steady');
    flood = ConnectFlood.start({ port: fleet.broker.grpcPort, ...FLOOD });
    await flood.reached(FLOOD_BEFORE_DIALS);

    const session = fleet.broker.registry.localSessions().find((s) => s.agentId === steady.connection.currentIdentity.agentId);
    const back = nextEvent(steady.connection, 'connected', 30_000);
    session?.close({ code: grpc.status.UNAVAILABLE, details: 'the test cut the stream' });
    await back;
    const newcomer = await fleet.addAgent('newcomer', { waitOnline: false });
    if (!newcomer.connection.connected) await nextEvent(newcomer.connection, 'connected', 30_000);
    const during = flood.counts;
    await waitFor(() => fleet.broker.registry.list().every((host) => host.state === 'online'), { what: 'both agents online' });
    expect(fleet.broker.registry.list().map((host) => host.name)).toEqual(['newcomer', 'steady']);

    // The flood was still at it, and the broker closed its connections rather than keep them.
    await flood.reached(during.connects + 1500);
    expect(flood.counts.closed_by_server).toBeGreaterThan(0);
  });
});

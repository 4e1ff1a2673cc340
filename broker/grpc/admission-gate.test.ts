import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../test/harness/wait.ts';
import { AdmissionGate, type AdmissionLimits, canSharePorts } from './admission-gate.ts';
import type { AdmissionRate } from './admission-pacer.ts';

/** Limits no case here reaches, unless it says otherwise. */
const LIMITS: AdmissionLimits = {
  pendingPerSource: 100,
  pendingPerSlowedSource: 100,
  pendingTotal: 1000,
  unfinishedPerSource: { burst: 100, perMinute: 60 },
  helloTimeoutMs: 30_000,
  handshakeTimeoutMs: 30_000,
  handshakesAtOnce: 1000,
};

/**
 * A client connection from `from` (a loopback address of its own stands for
 * another host), resolved once the TCP handshake is done (the gate accepts at
 * once); it sends `label` unless that is undefined, a bare connect.
 */
async function dial(port: number, label: string | undefined, from = '127.0.0.1'): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from });
  // A connection the gate closes unread is reset.
  socket.on('error', () => {});
  await once(socket, 'connect');
  if (label !== undefined) socket.write(label);
  return socket;
}

/** Resolves when the socket closes, reset or not (`once` would reject on the reset's error). */
function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.closed) resolve();
    else socket.once('close', () => resolve());
  });
}

/** The first bytes a connection handed over carries: its client's label. */
async function labelOf(socket: Socket): Promise<string> {
  socket.resume();
  const [data] = (await once(socket, 'data')) as [Buffer];
  return data.toString();
}

/** How grpc-js names the peer of a connection the gate handed over. */
function peerOf(socket: Socket): string {
  return `${socket.remoteAddress}:${socket.remotePort}`;
}

describe('the admission gate', () => {
  const clients: Socket[] = [];
  const admitted: Socket[] = [];
  let gate: AdmissionGate | undefined;

  afterEach(() => {
    gate?.close();
    gate = undefined;
    for (const socket of [...clients.splice(0), ...admitted.splice(0)]) socket.destroy();
  });

  async function open(rate: AdmissionRate, limits: Partial<AdmissionLimits> = {}): Promise<number> {
    gate = new AdmissionGate({ rate, limits: { ...LIMITS, ...limits }, admit: (socket) => admitted.push(socket) });
    return gate.listen('127.0.0.1', 0);
  }

  it('hands connections over one turn apart, in the order they came, with the bytes they sent before their turn', async () => {
    const port = await open({ burst: 1, perSecond: 20 });
    for (const label of ['a', 'b', 'c', 'd']) clients.push(await dial(port, label));
    await waitFor(() => admitted.length === 4, { what: 'four connections handed over' });
    expect(await Promise.all(admitted.map(labelOf))).toEqual(['a', 'b', 'c', 'd']);
    expect(gate?.waiting).toBe(0);
  });

  it('gives turns round the sources: a source that dialled many times does not make another wait behind all of them', async () => {
    const port = await open({ burst: 1, perSecond: 2 });
    for (const label of ['flood-1', 'flood-2', 'flood-3', 'flood-4']) clients.push(await dial(port, label, '127.0.0.2'));
    await waitFor(() => admitted.length === 1 && gate?.waiting === 3, { what: 'the first handed over, three waiting' });
    clients.push(await dial(port, 'agent', '127.0.0.1'));
    await waitFor(() => admitted.length === 3, { what: 'two more connections handed over' });
    expect(await Promise.all(admitted.map(labelOf))).toEqual(['flood-1', 'flood-2', 'agent']);
  });

  it('gives the turn of a connection that closed while it waited to the next one', async () => {
    const port = await open({ burst: 1, perSecond: 2 });
    const first = await dial(port, 'first');
    const leaving = await dial(port, 'leaving');
    const next = await dial(port, 'next');
    clients.push(first, leaving, next);
    await waitFor(() => admitted.length === 1 && gate?.waiting === 2, { what: 'one handed over, two waiting' });
    leaving.destroy();
    await waitFor(() => gate?.waiting === 1, { what: 'the closed connection out of the line' });
    await waitFor(() => admitted.length === 2, { what: 'the next connection handed over' });
    expect(await labelOf(admitted[1] as Socket)).toBe('next');
  });

  it('closes a bare connect that sends nothing within the hello clock, without spending a turn on it', async () => {
    const port = await open({ burst: 1, perSecond: 1 }, { helloTimeoutMs: 200 });
    const bare = await dial(port, undefined);
    clients.push(bare);
    await closed(bare);
    expect(gate?.figures().outcomes.hello_timeout).toBe(1);
    const agent = await dial(port, 'agent');
    clients.push(agent);
    await waitFor(() => admitted.length === 1, { what: 'the agent handed over' });
    expect(await labelOf(admitted[0] as Socket)).toBe('agent');
  });

  it("closes at once a connection past its source's limit, while another source's connection is still taken", async () => {
    const port = await open({ burst: 1, perSecond: 0.1 }, { pendingPerSource: 2 });
    const kept = [await dial(port, 'flood-1', '127.0.0.2'), await dial(port, 'flood-2', '127.0.0.2')];
    const refused = await dial(port, 'flood-3', '127.0.0.2');
    clients.push(...kept, refused);
    await closed(refused);
    const other = await dial(port, 'agent', '127.0.0.1');
    clients.push(other);
    await waitFor(() => gate?.waiting === 2, { what: 'the agent waiting beside the flood' });
    expect(kept.every((socket) => !socket.closed)).toBe(true);
    expect(gate?.figures()).toMatchObject({ pending: { waiting: 2, handshake: 1 }, handedOver: 1, outcomes: { refused_full: 1 } });
  });

  it('slows a source that leaves its connections unfinished to fewer connections at once, and only that source', async () => {
    const port = await open({ burst: 1, perSecond: 0.1 }, { helloTimeoutMs: 100, pendingPerSlowedSource: 1, unfinishedPerSource: { burst: 2, perMinute: 1 } });
    // Two bare connects left unfinished spend the source's allowance.
    for (let i = 0; i < 2; i++) {
      const bare = await dial(port, undefined, '127.0.0.2');
      clients.push(bare);
      await closed(bare);
    }
    const one = await dial(port, 'slowed-1', '127.0.0.2');
    const two = await dial(port, 'slowed-2', '127.0.0.2');
    clients.push(one, two);
    await closed(two);
    expect(one.closed).toBe(false);
    // Another source may still hold more than one.
    const others = [await dial(port, 'a', '127.0.0.1'), await dial(port, 'b', '127.0.0.1')];
    clients.push(...others);
    await waitFor(() => (gate?.waiting ?? 0) + admitted.length === 3, { what: 'three connections taken' });
    expect(others.every((socket) => !socket.closed)).toBe(true);
  });

  it('closes a connection handed over that makes no call within the handshake clock, and keeps one established', async () => {
    const port = await open({ burst: 2, perSecond: 1 }, { handshakeTimeoutMs: 300 });
    const established = await dial(port, 'established');
    const silent = await dial(port, 'silent');
    clients.push(established, silent);
    await waitFor(() => admitted.length === 2, { what: 'both handed over' });
    const [first, second] = admitted as [Socket, Socket];
    const labels = [await labelOf(first), await labelOf(second)];
    gate?.established(peerOf(labels[0] === 'established' ? first : second));
    await closed(silent);
    expect(established.closed).toBe(false);
    // What /metrics shows of it: two handed over, one established, one out of time.
    expect(gate?.figures()).toMatchObject({
      pending: { hello: 0, waiting: 0, handshake: 0 },
      handedOver: 2,
      outcomes: { established: 1, handshake_timeout: 1, refused_full: 0 },
    });
  });

  it("does not time out a hello that came while the broker's own event loop was held, before it could read it", async () => {
    const port = await open({ burst: 10, perSecond: 10 }, { helloTimeoutMs: 200 });
    const socket = await dial(port, undefined);
    clients.push(socket);
    await waitFor(() => gate?.figures().pending.hello === 1, { what: 'the connection accepted' });
    socket.write('late-but-sent');
    // The hello is in the broker's socket, unread, while the loop is held past its clock.
    const until = Date.now() + 1500;
    while (Date.now() < until);
    await waitFor(() => admitted.length === 1, { what: 'the connection handed over' });
    expect(await labelOf(admitted[0] as Socket)).toBe('late-but-sent');
    expect(gate?.figures().outcomes.hello_timeout).toBe(0);
  });

  it('hands over no more than its handshakes at once, and the next turn as soon as one ends, established or not', async () => {
    const port = await open({ burst: 100, perSecond: 1000 }, { handshakesAtOnce: 2 });
    for (const label of ['a', 'b', 'c', 'd']) clients.push(await dial(port, label));
    await waitFor(() => admitted.length === 2 && gate?.waiting === 2, { what: 'two handed over, two waiting' });
    // Turns keep coming at the rate, but no room: still two.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(admitted).toHaveLength(2);
    gate?.established(peerOf(admitted[0] as Socket));
    await waitFor(() => admitted.length === 3, { what: 'the third handed over once the first was established' });
    // A handshake that fails (TLS closed the connection) makes room as well.
    (admitted[1] as Socket).destroy();
    await waitFor(() => admitted.length === 4 && gate?.waiting === 0, { what: 'the fourth handed over once the second left' });
    expect(gate?.figures()).toMatchObject({ pending: { waiting: 0, handshake: 2 }, handedOver: 4, outcomes: { established: 1, closed_unfinished: 1 } });
  });

  it('stops listening and closes the pending connections when closed, while an established one stays open', async () => {
    const port = await open({ burst: 1, perSecond: 0.1 });
    const first = await dial(port, 'first');
    const waiting = await dial(port, 'waiting');
    clients.push(first, waiting);
    await waitFor(() => admitted.length === 1 && gate?.waiting === 1, { what: 'one connection handed over, one waiting' });
    gate?.established(peerOf(admitted[0] as Socket));
    const waitingClosed = closed(waiting);
    gate?.close();
    await waitingClosed;
    expect(admitted).toHaveLength(1);
    expect(admitted[0]?.destroyed).toBe(false);
    // Whichever of the port's listen sockets the kernel would pick for a dial, none is left.
    for (let i = 0; i < 20; i++) {
      const refused = connect({ host: '127.0.0.1', port });
      const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
      expect(error.code).toBe('ECONNREFUSED');
    }
  });

  it('takes every connection, whichever of its listen sockets the kernel hands it to', async () => {
    const port = await open({ burst: 100, perSecond: 100 });
    const labels = Array.from({ length: 40 }, (_, i) => `c${i}`);
    for (const label of labels) clients.push(await dial(port, label));
    await waitFor(() => admitted.length === labels.length, { what: 'every connection handed over' });
    expect((await Promise.all(admitted.map(labelOf))).sort()).toEqual([...labels].sort());
  });

  it('refuses to listen on an address another gate listens on, as a second broker on the same port must fail', async () => {
    const port = await open({ burst: 1, perSecond: 1 });
    const second = new AdmissionGate({ rate: { burst: 1, perSecond: 1 }, limits: LIMITS, admit: (socket) => socket.destroy() });
    try {
      await expect(second.listen('127.0.0.1', port)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      second.close();
    }
  });
});

describe('listen sockets sharing a port', () => {
  it('are used from the Node releases that can share one (22.12, 23.1 and later)', () => {
    expect(['20.20.2', '22.11.0', '23.0.0'].map(canSharePorts)).toEqual([false, false, false]);
    expect(['22.12.0', '23.1.0', '24.22.3', '25.0.0'].map(canSharePorts)).toEqual([true, true, true, true]);
  });
});

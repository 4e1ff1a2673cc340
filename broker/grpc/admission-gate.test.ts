import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../test/harness/wait.ts';
import { AdmissionGate } from './admission-gate.ts';
import { AdmissionPacer } from './admission-pacer.ts';

/** A client connection, resolved once the TCP handshake is done (the gate accepts at once). */
async function dial(port: number, label: string): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port });
  // A connection the gate closes unread is reset.
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write(label);
  return socket;
}

/** Resolves when the socket closes, reset or not (`once` would reject on the reset's error). */
function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

/** The first bytes a connection handed over carries: its client's label. */
async function labelOf(socket: Socket): Promise<string> {
  socket.resume();
  const [data] = (await once(socket, 'data')) as [Buffer];
  return data.toString();
}

describe('the admission gate', () => {
  const clients: Socket[] = [];
  const admitted: Socket[] = [];
  let gate: AdmissionGate | undefined;

  afterEach(() => {
    gate?.close();
    for (const socket of [...clients.splice(0), ...admitted.splice(0)]) socket.destroy();
  });

  it('accepts every connection at once and hands them over one slot apart, in the order they came, unread until then', async () => {
    const handedOver: Promise<string>[] = [];
    let allHandedOver: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      allHandedOver = resolve;
    });
    gate = new AdmissionGate({
      pacer: new AdmissionPacer({ burst: 1, perSecond: 20 }),
      admit: (socket) => {
        admitted.push(socket);
        handedOver.push(labelOf(socket));
        if (admitted.length === 4) allHandedOver();
      },
      maxHoldMs: 10_000,
    });
    const port = await gate.listen('127.0.0.1', 0);
    for (const label of ['a', 'b', 'c', 'd']) clients.push(await dial(port, label));
    await done;
    expect(await Promise.all(handedOver)).toEqual(['a', 'b', 'c', 'd']);
    expect(gate.waiting).toBe(0);
  });

  it('closes at once a connection whose turn would come past the longest hold, without spending a slot', async () => {
    gate = new AdmissionGate({
      pacer: new AdmissionPacer({ burst: 1, perSecond: 1 }),
      admit: (socket) => admitted.push(socket),
      maxHoldMs: 1500,
    });
    const port = await gate.listen('127.0.0.1', 0);
    clients.push(await dial(port, 'now'), await dial(port, 'in a second'));
    const late = await dial(port, 'too late');
    clients.push(late);
    await closed(late);
    expect(admitted).toHaveLength(1);
    expect(gate.waiting).toBe(1);
  });

  it('stops listening and closes the waiting connections when closed, while a connection handed over stays open', async () => {
    gate = new AdmissionGate({
      pacer: new AdmissionPacer({ burst: 1, perSecond: 0.1 }),
      admit: (socket) => admitted.push(socket),
      maxHoldMs: 60_000,
    });
    const port = await gate.listen('127.0.0.1', 0);
    const first = await dial(port, 'first');
    const waiting = await dial(port, 'waiting');
    clients.push(first, waiting);
    await waitFor(() => admitted.length === 1 && gate?.waiting === 1, { what: 'one connection handed over, one waiting' });
    const waitingClosed = closed(waiting);
    gate.close();
    await waitingClosed;
    expect(admitted).toHaveLength(1);
    expect(admitted[0]?.destroyed).toBe(false);
    const refused = connect({ host: '127.0.0.1', port });
    const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ECONNREFUSED');
  });
});

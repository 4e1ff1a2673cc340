import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/log/logger.ts';
import { type CertificateAuthority, createCertificateAuthority } from '../../shared/pki/certificates.ts';
import type { BrokerRow } from '../store/brokers-table.ts';
import { signEnvelope } from './bus-envelope.ts';
import { type BusKeys, createBusKeys } from './bus-keys.ts';
import { BusTrust, type OpenedMessage } from './bus-trust.ts';

/** Registrations as the store keeps them, for the brokers a test registers. */
function registrations() {
  const rows = new Map<string, BrokerRow>();
  return {
    rows,
    add(keys: BusKeys) {
      rows.set(keys.brokerId, { ...keys.registration, stoppedAt: null, removedAt: null });
    },
    get: async (id: string) => rows.get(id),
    list: async () => [...rows.values()],
  };
}

/** Everything `trust` believed, and waits for the store lookups it started. */
function receiver(trust: BusTrust) {
  const believed: OpenedMessage[] = [];
  return {
    believed,
    async open(subject: string, data: Uint8Array) {
      trust.open(subject, data, (message) => believed.push(message));
      await new Promise((resolve) => setTimeout(resolve, 20));
    },
  };
}

const body = (text: string) => new TextEncoder().encode(JSON.stringify({ text }));
const text = (message: OpenedMessage | undefined) => (message ? (JSON.parse(message.body.toString()) as { text: string }).text : undefined);

describe('what a broker believes on the bus', () => {
  let ca: CertificateAuthority;
  let otherCa: CertificateAuthority;
  let a: BusKeys;
  let b: BusKeys;
  let c: BusKeys;

  beforeAll(async () => {
    ca = await createCertificateAuthority({ commonName: 'fleet CA', lifetimeMs: 86_400_000 });
    otherCa = await createCertificateAuthority({ commonName: 'another CA', lifetimeMs: 86_400_000 });
    [a, b, c] = await Promise.all([createBusKeys(ca, 'a'), createBusKeys(ca, 'b'), createBusKeys(ca, 'c')]);
  });

  function brokers(...registered: BusKeys[]) {
    const store = registrations();
    for (const keys of registered) store.add(keys);
    const trustOf = (keys: BusKeys) => new BusTrust(keys, store, () => [ca.certificatePem], silentLogger);
    return { store, trustOf };
  }

  it('believes a message signed by a registered broker, naming it as the sender, and only once', async () => {
    const { trustOf } = brokers(a, b);
    const sender = trustOf(a);
    const heard = receiver(trustOf(b));
    const message = sender.sign('fleetmesh.beat', body('alive'));
    await heard.open('fleetmesh.beat', message);
    await heard.open('fleetmesh.beat', message);
    expect(heard.believed.map((m) => [m.sender, text(m)])).toEqual([['a', 'alive']]);
  });

  it('drops plain messages, strangers, forged senders, replays and messages moved to another subject, counting each', async () => {
    const { trustOf } = brokers(a, b);
    const trustB = trustOf(b);
    const heard = receiver(trustB);
    await heard.open('fleetmesh.revoked', body('plain JSON'));
    const stranger = await createBusKeys(ca, 'evil');
    await heard.open('fleetmesh.revoked', trustOf(stranger).sign('fleetmesh.revoked', body('not registered')));
    const attacker = generateKeyPairSync('ed25519');
    await heard.open('fleetmesh.revoked', signEnvelope('fleetmesh.revoked', 'a', 1_000, body('signed as a by someone else'), attacker.privateKey));
    const genuine = trustOf(a).sign('fleetmesh.presence', body('on presence'));
    await heard.open('fleetmesh.revoked', genuine);
    expect(heard.believed).toEqual([]);
    expect(Object.fromEntries(trustB.dropCounts())).toMatchObject({ unsigned: 1, unknown_broker: 1, bad_signature: 2 });
  });

  it('refuses a registration whose certificate another CA issued, or whose certificate names another broker', async () => {
    const { store, trustOf } = brokers(a, b);
    const foreign = await createBusKeys(otherCa, 'mallory');
    store.add(foreign);
    // a's certificate and keys registered as broker c: the certificate names a.
    store.rows.set('c', { ...a.registration, brokerId: 'c', stoppedAt: null, removedAt: null });
    const trustB = trustOf(b);
    const heard = receiver(trustB);
    await heard.open('fleetmesh.beat', trustOf(foreign).sign('fleetmesh.beat', body('from another CA')));
    await heard.open('fleetmesh.beat', trustOf({ ...a, brokerId: 'c' }).sign('fleetmesh.beat', body('a, as c')));
    expect(heard.believed).toEqual([]);
    expect(trustB.dropCounts().get('unknown_broker')).toBe(2);
  });

  it('seals a message so that only its recipients read it', async () => {
    const { trustOf } = brokers(a, b, c);
    const trustA = trustOf(a);
    const toB = receiver(trustOf(b));
    const toC = receiver(trustOf(c));
    // Both must be known to seal to them: a hears from each first.
    const hearsB = receiver(trustA);
    await hearsB.open('fleetmesh.beat', trustOf(b).sign('fleetmesh.beat', body('b')));
    await hearsB.open('fleetmesh.beat', trustOf(c).sign('fleetmesh.beat', body('c')));
    const sealed = trustA.seal('fleetmesh.calls.broker.b', body('secret data'), ['b']);
    expect(sealed.includes(Buffer.from('secret data'))).toBe(false);
    await toB.open('fleetmesh.calls.broker.b', sealed);
    await toC.open('fleetmesh.calls.broker.b', sealed);
    expect(toB.believed.map(text)).toEqual(['secret data']);
    expect(toC.believed).toEqual([]);
    const both = trustA.seal('fleetmesh.calls.agent.x', body('for b and c'), ['b', 'c']);
    await toB.open('fleetmesh.calls.agent.x', both);
    await toC.open('fleetmesh.calls.agent.x', both);
    expect([...toB.believed, ...toC.believed].map((m) => `${m.sender}:${text(m)}`)).toEqual(['a:secret data', 'a:for b and c', 'a:for b and c']);
  });

  it('stops believing a broker once the operator removed it, and believes one restarted under its id with new keys', async () => {
    const { store, trustOf } = brokers(a, b);
    const trustB = trustOf(b);
    const heard = receiver(trustB);
    await heard.open('fleetmesh.beat', trustOf(a).sign('fleetmesh.beat', body('first')));
    const restarted = await createBusKeys(ca, 'a');
    store.add(restarted);
    await heard.open('fleetmesh.beat', trustOf(restarted).sign('fleetmesh.beat', body('after a restart')));
    store.rows.set('a', { ...restarted.registration, stoppedAt: null, removedAt: Date.now() });
    await trustB.refresh();
    await heard.open('fleetmesh.beat', trustOf(restarted).sign('fleetmesh.beat', body('after removal')));
    expect(heard.believed.map(text)).toEqual(['first', 'after a restart']);
    expect(trustB.dropCounts().get('removed_broker')).toBe(1);
  });
});

import type { Logger } from '../../shared/log/logger.ts';
import { RateLimiter } from '../limits/rate-limiter.ts';
import { ThrottledWarnings } from '../limits/throttled-warnings.ts';
import type { BrokerRow } from '../store/brokers-table.ts';
import { openSealed, type ReadEnvelope, readEnvelope, sealEnvelope, signatureHolds, signEnvelope } from './bus-envelope.ts';
import { type BusKeys, type BusPeer, pairKey, registrationKeyId, verifyRegistration } from './bus-keys.ts';
import { ReplayWindow } from './replay-window.ts';

/** Why a bus message was not believed (the label of `fleetmesh_bus_messages_dropped_total`). */
export const DROP_REASONS = [
  /** Not in the signed envelope at all (a plain JSON message, say). */
  'unsigned',
  /** Signed by a broker id the store has no registration for, or one whose certificate the fleet CA did not issue. */
  'unknown_broker',
  /** From a broker the operator removed. */
  'removed_broker',
  /** The signature or sealed key does not check out against the sender's registered keys. */
  'bad_signature',
  /** A sequence number this broker has seen from that sender already. */
  'replayed',
  /** Sealed for other brokers only. */
  'not_addressed',
  /** Well signed, but not what that subject carries. */
  'malformed',
  /** A broker speaking for another: a report of an agent it does not hold, a body naming another broker. */
  'wrong_sender',
  /** A revocation or departure the store does not confirm. */
  'unconfirmed',
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** A message whose sender and integrity checked out. */
export interface OpenedMessage {
  /** The broker that sent it, as its keys prove. */
  sender: string;
  body: Buffer;
}

/** Where registrations come from: the store's `brokers` table. */
export interface RegistrationSource {
  get(brokerId: string): Promise<BrokerRow | undefined>;
  list(): Promise<BrokerRow[]>;
}

/** Messages held for a sender whose registration is being read. */
const MAX_HELD_PER_SENDER = 512;
/** A sender the store does not know is not looked up again for this long. */
const UNKNOWN_FOR_MS = 2000;

interface Held {
  subject: string;
  envelope: ReadEnvelope;
  deliver: (message: OpenedMessage) => void;
  retried: boolean;
}

/**
 * What this broker believes on the bus. Every message it sends is signed with
 * its Ed25519 key or sealed to its recipients; every message it receives is
 * believed only when its signature (or the key it was sealed with) belongs to
 * a broker registered on the store with a certificate of the fleet CA, and its
 * sequence number is new. The rest is dropped and counted by reason. Senders
 * not met yet are read from the store while their messages wait, in order.
 */
export class BusTrust {
  private readonly peers = new Map<string, { peer: BusPeer; pair?: Buffer }>();
  /** Messages of senders not met yet, while their registration is read. */
  private readonly held = new Map<string, Held[]>();
  /** Messages of known senders that did not check out, while their registration is read again. */
  private readonly reloading = new Map<string, Held[]>();
  private readonly unknownUntil = new Map<string, number>();
  private readonly windows = new Map<string, ReplayWindow>();
  private readonly counts = new Map<DropReason, number>(DROP_REASONS.map((reason) => [reason, 0]));
  /** Store lookups of senders not met yet: bounded whatever ids a stranger makes up. */
  private readonly lookups = new RateLimiter({ burst: 20, perMinute: 600 }, 1);
  private readonly warnings: ThrottledWarnings;
  private seq = 0;

  constructor(
    private readonly keys: BusKeys,
    private readonly source: RegistrationSource,
    private readonly trustedCaPems: () => readonly string[],
    private readonly log: Logger,
  ) {
    this.warnings = new ThrottledWarnings(log, { burst: 10, perMinute: 6 });
  }

  get brokerId(): string {
    return this.keys.brokerId;
  }

  /** Messages dropped so far, by reason. */
  dropCounts(): ReadonlyMap<DropReason, number> {
    return this.counts;
  }

  /** Counts a dropped message and says why, at a bounded rate. */
  drop(reason: DropReason, fields: { subject: string; sender?: string; why?: string }): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    this.warnings.warn('bus message dropped', { reason, ...fields });
  }

  sign(subject: string, body: Uint8Array): Buffer {
    return signEnvelope(subject, this.brokerId, this.seq++, body, this.keys.signingKey);
  }

  /** Whether a message can be sealed to this broker now (its registration has been read and checked). */
  knows(brokerId: string): boolean {
    return this.peers.has(brokerId);
  }

  /** A message only `recipients` can read; every one of them must be known (`knows`). */
  seal(subject: string, body: Uint8Array, recipients: readonly string[], alwaysSign = false): Buffer {
    return sealEnvelope(subject, this.brokerId, this.seq++, body, recipients, (id) => this.pairKeyOf(id), this.keys.signingKey, alwaysSign);
  }

  /**
   * Checks a message and hands its body to `deliver` once it is believed: at
   * once, or after its sender's registration is read. Anything else is dropped
   * and counted; this broker's own messages are ignored.
   */
  open(subject: string, data: Uint8Array, deliver: (message: OpenedMessage) => void): void {
    const envelope = readEnvelope(data);
    if (!envelope) {
      this.drop('unsigned', { subject });
      return;
    }
    const sender = envelope.header.f;
    if (sender === this.brokerId) return;
    const waiting = this.held.get(sender);
    if (waiting) {
      this.hold(waiting, { subject, envelope, deliver, retried: false });
      return;
    }
    const known = this.peers.get(sender);
    if (!known) {
      this.lookUp(sender, { subject, envelope, deliver, retried: false });
      return;
    }
    this.check({ subject, envelope, deliver, retried: false }, known.peer);
  }

  /**
   * Reads the registrations again: a broker removed or restarted with new keys
   * is forgotten, so its next message is checked against what the store says now.
   */
  async refresh(): Promise<void> {
    const rows = new Map((await this.source.list()).map((row) => [row.brokerId, row]));
    for (const [brokerId, { peer }] of this.peers) {
      const row = rows.get(brokerId);
      if (row && row.removedAt === null && registrationKeyId(row) === peer.keyId) continue;
      this.peers.delete(brokerId);
      if (row && row.removedAt !== null) this.log.warn('broker removed from the cluster: its messages are dropped from now on', { broker: brokerId });
    }
  }

  private pairKeyOf(brokerId: string): Buffer {
    const known = this.peers.get(brokerId);
    if (!known) throw new Error(`broker ${brokerId} is not known on the bus yet`);
    known.pair ??= pairKey(this.keys, known.peer);
    return known.pair;
  }

  private hold(list: Held[], item: Held): void {
    if (list.length >= MAX_HELD_PER_SENDER) {
      this.drop('unknown_broker', { subject: item.subject, sender: item.envelope.header.f, why: 'too many messages wait for its registration' });
      return;
    }
    list.push(item);
  }

  private lookUp(sender: string, first: Held): void {
    const now = Date.now();
    if ((this.unknownUntil.get(sender) ?? 0) > now || !this.lookups.take('', now).allowed) {
      this.drop('unknown_broker', { subject: first.subject, sender });
      return;
    }
    const list: Held[] = [first];
    this.held.set(sender, list);
    this.readRegistration(sender).then((verdict) => {
      this.held.delete(sender);
      if (typeof verdict === 'string') {
        if (this.unknownUntil.size > 10_000) this.unknownUntil.clear();
        this.unknownUntil.set(sender, Date.now() + UNKNOWN_FOR_MS);
        const reason: DropReason = /removed/.test(verdict) ? 'removed_broker' : 'unknown_broker';
        for (const item of list) this.drop(reason, { subject: item.subject, sender, why: verdict });
        return;
      }
      this.peers.set(sender, { peer: verdict });
      for (const item of list) this.check(item, verdict);
    });
  }

  private readRegistration(sender: string): Promise<BusPeer | string> {
    return this.source.get(sender).then(
      (row) => (row ? verifyRegistration(row, this.trustedCaPems()) : `no broker ${sender} is registered on the store`),
      (error: unknown) => `its registration cannot be read: ${(error as Error).message}`,
    );
  }

  /**
   * A known sender's message that does not check out: the sender may have
   * restarted under the same id with new keys, so its registration is read
   * again (at a bounded rate) and the message checked once more if the keys
   * changed. Meanwhile its other messages are checked as before: a stranger
   * forging its signature cannot make this broker forget it.
   */
  private recheck(item: Held, peer: BusPeer): void {
    const waiting = this.reloading.get(peer.brokerId);
    if (waiting) {
      this.hold(waiting, item);
      return;
    }
    if (!this.lookups.take('', Date.now()).allowed) {
      this.drop('bad_signature', { subject: item.subject, sender: peer.brokerId });
      return;
    }
    const list: Held[] = [item];
    this.reloading.set(peer.brokerId, list);
    this.readRegistration(peer.brokerId).then((verdict) => {
      this.reloading.delete(peer.brokerId);
      const renewed = typeof verdict !== 'string' && verdict.keyId !== peer.keyId;
      if (renewed) this.peers.set(peer.brokerId, { peer: verdict });
      if (typeof verdict === 'string' && /removed/.test(verdict)) this.peers.delete(peer.brokerId);
      for (const held of list) {
        if (renewed) this.check({ ...held, retried: true }, verdict);
        else
          this.drop(typeof verdict === 'string' && /removed/.test(verdict) ? 'removed_broker' : 'bad_signature', {
            subject: held.subject,
            sender: peer.brokerId,
          });
      }
    });
  }

  private check(item: Held, peer: BusPeer): void {
    const { subject, envelope } = item;
    const body = this.verify(subject, envelope, peer);
    if (body === 'not_addressed') {
      this.drop('not_addressed', { subject, sender: peer.brokerId });
      return;
    }
    if (!body) {
      if (item.retried) this.drop('bad_signature', { subject, sender: peer.brokerId });
      else this.recheck(item, peer);
      return;
    }
    const windowKey = `${peer.brokerId}\u0000${peer.keyId}`;
    let window = this.windows.get(windowKey);
    if (!window) {
      for (const key of this.windows.keys()) if (key.startsWith(`${peer.brokerId}\u0000`)) this.windows.delete(key);
      window = new ReplayWindow();
      this.windows.set(windowKey, window);
    }
    if (!window.accept(envelope.header.s)) {
      this.drop('replayed', { subject, sender: peer.brokerId });
      return;
    }
    item.deliver({ sender: peer.brokerId, body });
  }

  private verify(subject: string, envelope: ReadEnvelope, peer: BusPeer): Buffer | undefined | 'not_addressed' {
    if (envelope.header.g === 1 && !signatureHolds(subject, envelope, peer.signingKey)) return undefined;
    if (!envelope.sealed) return envelope.header.g === 1 ? envelope.body : undefined;
    if (typeof envelope.header.r?.[this.brokerId] !== 'string') return 'not_addressed';
    return openSealed(subject, envelope, this.brokerId, this.pairKeyOf(peer.brokerId));
  }
}

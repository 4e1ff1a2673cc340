import { EventEmitter } from 'node:events';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { create } from '@bufbuild/protobuf';
import type { HostSample } from '../../shared/catalog/sample.ts';
import { type ErrorInfo, FleetError } from '../../shared/errors/fleet-error.ts';
import {
  type AgentFrame,
  AgentFrameSchema,
  type BrokerFrame,
  CallErrorSchema,
  ChunkSchema,
  HeartbeatSchema,
  HelloSchema,
  RenewRequestSchema,
  ReportSchema,
  ResultSchema,
} from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { GrpcCode, type GrpcStatus } from '../../shared/grpc/status-codes.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { createCertificateRequest } from '../../shared/pki/certificate-request.ts';
import { createKeyPair, type KeyPair } from '../../shared/pki/certificates.ts';
import { type ContainerFigures, sampleToWire } from '../../shared/wire/sample-codec.ts';
import type { Dispatcher, ResultSink } from '../dispatcher/dispatcher.ts';
import { caPinsOf } from '../enrollment/fetch-broker-ca.ts';
import { type AgentIdentity, replaceCertificate, replaceTrust } from '../identity/agent-identity.ts';
import { fullJitterDelayMs, setLongTimeout, sleep } from './backoff.ts';
import { nextAddressIndex, parseBrokerAddresses } from './broker-addresses.ts';
import { createMeshClient, type MeshClient, type MeshStream } from './mesh-client.ts';

export type HelloInit = MessageInitShape<typeof HelloSchema>;

interface BrokerConnectionOptions {
  dataDir: string;
  identity: AgentIdentity;
  dispatcher: Dispatcher;
  /** The Hello to send on each new stream (collectors are re-probed by the caller as it likes). */
  hello: () => HelloInit;
  sample: () => HostSample;
  /** Container figures to send with the next heartbeat, when there are fresh ones. */
  containerSamples?: () => ContainerFigures[];
  log: Logger;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Enrolls again with the configured token when the certificate has expired; absent without a token. */
  reenroll?: () => Promise<AgentIdentity>;
  /** Makes the key pair of each renewal (a test fleet of hundreds shares a few). */
  newKeys?: () => Promise<KeyPair>;
}

interface ConnectionEvents {
  connected: [welcome: { sessionId: string; name: string; agentId: string }];
  disconnected: [reason: string];
  renewed: [identity: AgentIdentity];
  /** The agent cannot go on (revoked, or expired without a token): the process should stop. */
  fatal: [error: FleetError];
}

interface StreamEnd {
  status: GrpcStatus;
  welcomed: boolean;
  livedMs: number;
  /** The broker asked this agent to come back later (shutdown, admission pacing). */
  reconnect?: { delayMs: number; address: string };
}

/** A stream that lived this long counts as a success: the next failure starts the backoff afresh. */
const HEALTHY_SESSION_MS = 10_000;
/** The longest wait a broker's Reconnect can impose; past it the agent dials anyway. */
const MAX_RECONNECT_DELAY_MS = 5 * 60_000;
/** How many brokers that Reconnect messages named an agent keeps dialling besides its own addresses. */
const MAX_LEARNED_ADDRESSES = 8;
/**
 * The backoff cap after a broker that sent Reconnect cannot be reached yet (it
 * is restarting): it said it would be back, and a refused dial costs it
 * nothing, so the fleet keeps trying every few seconds rather than drifting to
 * the full cap and coming back long after it listens again (docs/performance.md).
 */
const RESTART_BACKOFF_CAP_MS = 4000;

/** A refused renewal is asked again after 5 s, then twice as long each time, up to a minute. */
const RENEW_RETRY_FIRST_MS = 5000;
const RENEW_RETRY_MAX_MS = 60_000;

/** What Node's TLS says when a server's certificate does not chain to a CA this agent trusts. */
const UNTRUSTED_SERVER =
  /unable to verify the first certificate|unable to get local issuer certificate|self[- ]signed certificate in certificate chain|certificate signature failure/i;

/**
 * The agent's side of the Connect stream: dials out, says Hello, sends
 * heartbeats, runs the calls that come down, renews its certificate before two
 * thirds of its life, and when the stream ends, reconnects with full-jitter
 * backoff, once per failure however many events the failure raised.
 */
export class BrokerConnection extends EventEmitter<ConnectionEvents> {
  private identity: AgentIdentity;
  private readonly stopController = new AbortController();
  private running: Promise<void> | undefined;
  private current: { client: MeshClient; stream: MeshStream } | undefined;
  private isConnected = false;
  private renewTimer: { clear(): void } | undefined;
  private renewAtFor: { serial: string; at: number } | undefined;
  /** How long after the next refused renewal to ask again (doubled up to a minute; reset by a renewal). */
  private renewRetryMs = RENEW_RETRY_FIRST_MS;
  /** The key pair of the renewal asked for (`making` while it is made), until the broker answers. */
  private pendingRenewal: KeyPair | 'making' | undefined;
  private clockSkewMs = 0;
  /** Which of the identity's broker addresses the next stream dials. */
  private addressTurn = 0;
  /** Where the next dial goes when a broker's Reconnect named another address (once; then back to our own). */
  private redirectAddress: string | undefined;
  /**
   * Brokers a broker of ours sent this agent to (newest last, a few): dialled
   * after our own addresses in turn, so an agent given a single broker's
   * address still finds the cluster when that broker is gone.
   */
  private readonly learnedAddresses: string[] = [];
  /** Settles when the connection gives up for good (revoked, or expired without a token). */
  readonly fatal: Promise<FleetError>;

  constructor(private readonly options: BrokerConnectionOptions) {
    super();
    this.identity = options.identity;
    this.fatal = new Promise((resolve) => this.once('fatal', resolve));
  }

  get connected(): boolean {
    return this.isConnected;
  }

  get currentIdentity(): AgentIdentity {
    return this.identity;
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    this.renewTimer?.clear();
    const current = this.current;
    current?.stream.cancel();
    current?.client.close();
    await this.running;
  }

  /** Resolves once the broker has welcomed this agent (or at once if it has). */
  waitConnected(signal?: AbortSignal): Promise<void> {
    if (this.isConnected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onFatal = (error: FleetError) => {
        this.off('connected', onConnected);
        reject(error);
      };
      const onConnected = () => {
        this.off('fatal', onFatal);
        resolve();
      };
      this.once('connected', onConnected);
      this.once('fatal', onFatal);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  }

  /** Tells the broker about something it indexes (container events…); dropped while disconnected. */
  report(kind: string, payload: unknown): void {
    if (!this.current || !this.isConnected) return;
    this.current.stream.write(
      create(AgentFrameSchema, {
        frame: {
          case: 'report',
          value: create(ReportSchema, { kind, payloadJson: new TextEncoder().encode(JSON.stringify(payload)), observedUnixMs: BigInt(Date.now()) }),
        },
      }),
    );
  }

  /** Sends a fresh Hello on the live stream, so the broker sees changed labels or collectors at once. */
  announce(): void {
    if (!this.current || !this.isConnected) return;
    this.current.stream.write(create(AgentFrameSchema, { frame: { case: 'hello', value: create(HelloSchema, this.options.hello()) } }));
  }

  private async loop(): Promise<void> {
    const { log } = this.options;
    const stopped = this.stopController.signal;
    let failures = 0;
    /** Since the last broker's Reconnect, until a stream is welcomed again. */
    let toldToReconnect = false;
    while (!stopped.aborted) {
      if (this.identity.notAfter.getTime() <= Date.now()) {
        if (!(await this.recoverExpired())) return;
        continue;
      }
      const end = await this.runStream();
      if (stopped.aborted) return;
      const fatal = await this.classify(end.status);
      if (fatal) {
        log.error(fatal.message, { hint: fatal.hint });
        this.emit('fatal', fatal);
        return;
      }
      // With several brokers (a cluster), the next attempt dials another one.
      const addresses = this.addresses();
      this.addressTurn = nextAddressIndex(this.addressTurn % addresses.length, addresses.length);
      if (end.welcomed) toldToReconnect = false;
      if (end.reconnect) {
        // A clean close: the broker chose when this agent comes back, and the next failure starts the backoff afresh.
        failures = 0;
        toldToReconnect = true;
        this.redirectAddress = end.reconnect.address || undefined;
        if (this.redirectAddress) this.learn(this.redirectAddress);
        const delayMs = Math.min(end.reconnect.delayMs, MAX_RECONNECT_DELAY_MS);
        log.info('the broker asked this agent to reconnect later', {
          reason: end.status.details,
          retry_in_ms: delayMs,
          address: end.reconnect.address || undefined,
        });
        await sleep(delayMs, stopped);
        continue;
      }
      const clean = end.status.code === GrpcCode.OK;
      failures = clean || (end.welcomed && end.livedMs >= HEALTHY_SESSION_MS) ? 1 : failures + 1;
      const capMs = toldToReconnect ? Math.min(this.options.backoffCapMs, RESTART_BACKOFF_CAP_MS) : this.options.backoffCapMs;
      const delayMs = fullJitterDelayMs(failures, this.options.backoffBaseMs, capMs);
      log.warn('not connected to the broker; retrying', {
        reason: end.status.details || 'stream ended',
        retry_in_ms: delayMs,
        attempt: failures,
        // The broker serves a certificate of a CA this agent does not trust: say why in words.
        ...(UNTRUSTED_SERVER.test(end.status.details)
          ? {
              hint: "the broker's certificate is not issued by a CA this agent trusts: if the fleet's CA was rotated while this agent was away, enroll it again with a join token and the current pin (fleetmesh token create prints both)",
            }
          : {}),
      });
      await sleep(delayMs, stopped);
    }
  }

  private learn(address: string): void {
    const known = this.learnedAddresses.indexOf(address);
    if (known >= 0) this.learnedAddresses.splice(known, 1);
    this.learnedAddresses.push(address);
    if (this.learnedAddresses.length > MAX_LEARNED_ADDRESSES) this.learnedAddresses.shift();
  }

  /** Decides whether a stream's end is final. */
  private async classify(status: GrpcStatus): Promise<FleetError | undefined> {
    if (status.code === GrpcCode.PERMISSION_DENIED) {
      const rotatedOut = /no longer trusts/.test(status.details);
      return new FleetError('forbidden', `the broker refused this agent: ${status.details || 'permission denied'}`, {
        hint: rotatedOut
          ? "The fleet's CA was rotated while this agent was away. Enroll it again with a join token and the current pin (fleetmesh token create prints both); with the same --data-dir it keeps its name."
          : 'This agent was revoked. To bring the host back, enroll it as a new agent with a fresh join token (after removing its data dir).',
      });
    }
    if (status.code === GrpcCode.UNAUTHENTICATED && this.identity.notAfter.getTime() <= Date.now()) {
      return (await this.recoverExpired()) ? undefined : new FleetError('forbidden', 'the agent certificate has expired');
    }
    return undefined;
  }

  /** An expired certificate: enroll again when a token is configured, or stop with a clear line. */
  private async recoverExpired(): Promise<boolean> {
    const expiredAt = this.identity.notAfter.toISOString();
    if (!this.options.reenroll) {
      const error = new FleetError('forbidden', `the agent certificate expired at ${expiredAt}`, {
        hint: 'Enroll again: fleetmesh agent --broker … --token <new token> --ca-pin … (with the same --data-dir it keeps its name).',
      });
      this.options.log.error(error.message, { hint: error.hint });
      this.emit('fatal', error);
      return false;
    }
    this.options.log.warn('the agent certificate expired; enrolling again with the configured token', { expired_at: expiredAt });
    try {
      this.identity = await this.options.reenroll();
      return true;
    } catch (error) {
      const failure = error instanceof FleetError ? error : new FleetError('internal', String(error));
      this.options.log.error(`could not enroll again: ${failure.message}`, { hint: failure.hint });
      this.emit('fatal', failure);
      return false;
    }
  }

  /** The identity's broker addresses, then those brokers sent this agent to. */
  private addresses(): string[] {
    const own = parseBrokerAddresses(this.identity.brokerAddress);
    return [...own, ...this.learnedAddresses.filter((learned) => !own.includes(learned))];
  }

  private runStream(): Promise<StreamEnd> {
    const { log, dispatcher } = this.options;
    const identity = this.identity;
    const addresses = this.addresses();
    const address = this.redirectAddress ?? (addresses[this.addressTurn % addresses.length] as string);
    this.redirectAddress = undefined;
    const openedAt = Date.now();
    return new Promise<StreamEnd>((resolve) => {
      const client = createMeshClient(address, identity);
      const stream = client.connect();
      this.current = { client, stream };
      let welcomed = false;
      let heartbeat: NodeJS.Timeout | undefined;
      let settled = false;
      let reconnect: StreamEnd['reconnect'];
      const write = (frame: AgentFrame['frame']) => {
        if (!settled) stream.write(create(AgentFrameSchema, { frame }));
      };
      const sink: ResultSink = {
        chunk: (callId, seq, payloadJson) => write({ case: 'chunk', value: create(ChunkSchema, { callId, seq, payloadJson }) }),
        result: (callId, payloadJson, failedCollectors, errors: ErrorInfo[], absentCollectors = []) =>
          write({
            case: 'result',
            value: create(ResultSchema, {
              callId,
              payloadJson,
              failedCollectors,
              absentCollectors,
              errors: errors.map((e) => create(CallErrorSchema, { code: e.code, message: e.message, hint: e.hint, collector: e.collector ?? '' })),
            }),
          }),
      };
      // One failure means one reconnect (DESIGN §10): a Reconnect frame settles the stream before its status comes.
      const finish = (status: GrpcStatus) => {
        if (settled) return;
        settled = true;
        clearInterval(heartbeat);
        this.renewTimer?.clear();
        this.pendingRenewal = undefined;
        dispatcher.cancelAll('the stream to the broker ended');
        this.current = undefined;
        client.close();
        if (this.isConnected) {
          this.isConnected = false;
          this.emit('disconnected', status.details || 'stream ended');
        }
        resolve({ status, welcomed, livedMs: Date.now() - openedAt, ...(reconnect ? { reconnect } : {}) });
      };
      stream.on('status', finish);
      stream.on('data', (frame: BrokerFrame) => {
        switch (frame.frame.case) {
          case 'welcome': {
            const welcome = frame.frame.value;
            welcomed = true;
            this.clockSkewMs = Number(welcome.serverTimeUnixMs) - Date.now();
            this.isConnected = true;
            const sendHeartbeat = () =>
              write({
                case: 'heartbeat',
                value: create(HeartbeatSchema, {
                  sentUnixMs: BigInt(Date.now()),
                  sample: sampleToWire(this.options.sample(), this.options.containerSamples?.() ?? []),
                }),
              });
            sendHeartbeat();
            heartbeat = setInterval(sendHeartbeat, Math.max(100, welcome.heartbeatIntervalMs || 5000));
            log.info('connected to the broker', { broker: address, name: welcome.name, session: welcome.sessionId });
            this.scheduleRenewal(write);
            this.emit('connected', { sessionId: welcome.sessionId, name: welcome.name, agentId: welcome.agentId });
            return;
          }
          case 'call': {
            const call = frame.frame.value;
            void dispatcher.run(
              {
                callId: call.callId,
                action: call.action,
                paramsJson: call.paramsJson,
                deadlineUnixMs: Number(call.deadlineUnixMs) - this.clockSkewMs,
                caller: call.caller,
                callerLevel: call.callerLevel,
              },
              sink,
            );
            return;
          }
          case 'cancel':
            dispatcher.cancel(frame.frame.value.callId, frame.frame.value.reason || 'cancelled by the broker');
            return;
          case 'renewResponse':
            this.onRenewResponse(frame.frame.value, write);
            return;
          case 'trust':
            this.onTrustUpdate(frame.frame.value, write);
            return;
          case 'reconnect': {
            const { delayMs, address: next, reason } = frame.frame.value;
            reconnect = { delayMs, address: next };
            finish({ code: GrpcCode.OK, details: reason || 'the broker asked this agent to reconnect' });
            stream.cancel();
            return;
          }
          default:
            return;
        }
      });
      write({ case: 'hello', value: create(HelloSchema, { ...this.options.hello(), trustedCaPins: caPinsOf(identity.caCertificatePem) }) });
    });
  }

  /**
   * A CA rotation step: the CAs to trust from now on (kept in ca.crt, used
   * from the next connection on), and, when the broker asks, a renewal now
   * under the CA that signs.
   */
  private onTrustUpdate(update: { caBundlePem: string; renewNow: boolean; reason: string }, write: (frame: AgentFrame['frame']) => void): void {
    const pins = caPinsOf(update.caBundlePem);
    if (pins.length > 0 && pins.join(',') !== caPinsOf(this.identity.caCertificatePem).join(',')) {
      this.identity = replaceTrust(this.options.dataDir, this.identity, update.caBundlePem, caPinsOf(this.identity.caCertificatePem));
      this.options.log.info('trusting the broker CAs it named', { ca_pins: pins.join(','), reason: update.reason });
    }
    if (update.renewNow) void this.requestRenewal(write);
  }

  /** Renews at a random point between half and two thirds of the certificate's life, so a fleet enrolled together does not renew together. */
  private scheduleRenewal(write: (frame: AgentFrame['frame']) => void): void {
    this.renewTimer?.clear();
    const { notBefore, notAfter, serial } = this.identity;
    if (this.renewAtFor?.serial !== serial) {
      const lifetime = notAfter.getTime() - notBefore.getTime();
      this.renewAtFor = { serial, at: notBefore.getTime() + lifetime * (0.5 + Math.random() / 6) };
    }
    this.renewTimer = setLongTimeout(() => void this.requestRenewal(write), Math.max(0, this.renewAtFor.at - Date.now()));
  }

  private async requestRenewal(write: (frame: AgentFrame['frame']) => void): Promise<void> {
    if (this.pendingRenewal || !this.isConnected) return;
    this.pendingRenewal = 'making';
    const keys = await (this.options.newKeys ?? createKeyPair)();
    if (this.pendingRenewal !== 'making') return;
    this.pendingRenewal = keys;
    this.options.log.info('renewing the agent certificate', { not_after: this.identity.notAfter.toISOString() });
    write({ case: 'renewRequest', value: create(RenewRequestSchema, { csrPem: createCertificateRequest(keys, this.identity.name) }) });
  }

  private onRenewResponse(response: { certificatePem: string; error: string }, write: (frame: AgentFrame['frame']) => void): void {
    const keys = this.pendingRenewal;
    if (keys === 'making') return;
    this.pendingRenewal = undefined;
    if (!keys) return;
    if (response.error || !response.certificatePem) {
      // 5 s, then twice as long each time up to a minute: a cluster's signer may be moving to another broker.
      const retryMs = this.renewRetryMs;
      this.renewRetryMs = Math.min(RENEW_RETRY_MAX_MS, retryMs * 2);
      this.options.log.warn('certificate renewal refused; will retry', { reason: response.error, retry_in_ms: retryMs });
      this.renewTimer = setLongTimeout(() => void this.requestRenewal(write), retryMs);
      return;
    }
    this.renewRetryMs = RENEW_RETRY_FIRST_MS;
    // The live stream keeps its TLS session; the new pair is used from the next connection on.
    this.identity = replaceCertificate(this.options.dataDir, this.identity, keys.privateKeyPem, response.certificatePem);
    this.options.log.info('agent certificate renewed', { not_after: this.identity.notAfter.toISOString() });
    this.emit('renewed', this.identity);
    this.scheduleRenewal(write);
  }
}

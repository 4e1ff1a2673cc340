import { EventEmitter } from 'node:events';
import type { HostSample } from '../../shared/catalog/sample.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { RefusalAudit } from '../calls/refusal-audit.ts';
import type { TaskWire } from '../mcp/tasks/mcp-tasks.ts';
import type { FleetAuthority } from '../pki/fleet-authority.ts';
import type { StoredHello } from '../store/agents-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { BROKER_STOPPED } from '../store/mcp-tasks-table.ts';
import { Bus, type BusOptions } from './bus.ts';
import { type BatchedReport, BusBatches } from './bus-batches.ts';
import { type BusKeys, certifyBusKeys, newBusKeys } from './bus-keys.ts';
import {
  beatMessage,
  brokerMessage,
  type PresenceMessage,
  presenceMessage,
  presenceSyncMessage,
  presencesMessage,
  reportMessage,
  reportsMessage,
  revokedMessage,
  SUBJECTS,
  samplesMessage,
  taskStatusMessage,
} from './bus-messages.ts';
import { BusTrust, type DropReason } from './bus-trust.ts';
import { CallServer } from './call-server.ts';
import { Rebalancer } from './rebalancer.ts';
import type { RelayAuthorizationDeps } from './relay-authorization.ts';
import { RemoteCalls } from './remote-calls.ts';
import { RemoteSession } from './remote-session.ts';
import { SigningService } from './signing-service.ts';

export interface ClusterOptions extends BusOptions {
  /** How often this broker says it is alive; one silent for three beats has left. */
  beatIntervalMs: number;
  /**
   * Where agents reach this broker in particular (`--cluster-address`), from
   * its own configuration: said on every beat, so a broker holding too many
   * agents may send some here. Without it, no agent is sent here.
   */
  agentAddress?: string;
}

const MISSED_BEATS = 3;
/**
 * A broker silent this long (or for MISSED_BEATS, when beats are further
 * apart) has left. A broker's beats come from its event loop, which a fan-out
 * to thousands of agents can hold for seconds (3.7 to 9.2 s seen in a cluster
 * of 10,000): a broker counted gone fails every call it was answering, which
 * it would have answered. Its agents do not wait for this: when it dies their
 * streams break, and they dial another broker within seconds.
 */
const SILENT_FLOOR_MS = 10_000;
/** How often the brokers registered on the store are read again, so one the operator removed is heard no more. */
const REGISTRATIONS_REFRESH_MS = 5000;
/** Registrations of brokers stopped this long ago are forgotten (one given no --broker-id has a new id at each start). */
const STOPPED_BROKERS_KEPT_MS = 7 * 86_400_000;
/** How long a broker that cannot sign waits for the one that does to certify its bus keys. */
const CERTIFICATE_WAIT_MS = 120_000;

/** What a broker of a cluster works with besides the bus. */
export interface ClusterDeps {
  registry: AgentRegistry;
  store: BrokerStore;
  /** The fleet's CAs: they certify each broker's bus keys, and the one broker that may sign does so for the cluster. */
  authority: FleetAuthority;
  /** What calls other brokers relay here are authorised against (its selfId is set here). */
  relay: Omit<RelayAuthorizationDeps, 'selfId' | 'store'>;
  refusals: Pick<RefusalAudit, 'record'>;
}

/** Waits until the broker that signs has certified these bus keys (it looks for waiting ones every couple of seconds). */
async function awaitCertificate(store: BrokerStore, keys: BusKeys, log: Logger): Promise<void> {
  const until = Date.now() + CERTIFICATE_WAIT_MS;
  log.info('waiting for the broker that signs to certify this broker\u2019s bus keys');
  for (;;) {
    const row = await store.brokers.get(keys.brokerId);
    if (row?.certificatePem && row.publicKeyPem === keys.registration.publicKeyPem) {
      keys.registration.certificatePem = row.certificatePem;
      return;
    }
    if (Date.now() > until) {
      throw new FleetError('unavailable', `no broker of the cluster certified this broker's bus keys within ${CERTIFICATE_WAIT_MS / 1000} s`, {
        hint: 'Start a broker that may sign (given --ca-key-secret-file, or the CA as --ca-cert-file and --ca-key-file) first, or give this one the secret.',
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function heldHere(host: Host | undefined): boolean {
  return host?.session !== undefined && host.session.heldBy === undefined;
}

/**
 * This broker's place in a cluster of brokers sharing one store and one NATS
 * bus: it says which agents it holds (on change, never per heartbeat; their
 * latest samples batched once a beat), learns
 * which agents the others hold so calls for them go there, passes agents'
 * reports and revocations to every broker, serves the calls others send for
 * its agents, and notices a broker that died (three missed beats) so its
 * agents show offline until they reconnect elsewhere.
 */
interface ClusterEvents {
  /** The status of an MCP task another broker runs, for this broker's sessions of its identity. */
  taskStatus: [identityId: string, task: TaskWire];
}

export class BrokerCluster extends EventEmitter<ClusterEvents> {
  private readonly lastBeat = new Map<string, number>();
  /** When this broker's own beat last ran. */
  private lastBeatAt: number | undefined;
  /** The brokers whose beats say they read reports in batches. */
  private readonly batchReaders = new Set<string>();
  private readonly reportBatches: BusBatches<BatchedReport>;
  /** The brokers whose beats say they read presence changes in batches. */
  private readonly presenceBatchReaders = new Set<string>();
  private readonly presenceBatches: BusBatches<PresenceMessage>;
  /** Where agents reach each broker that said so on its beat. */
  private readonly agentAddresses = new Map<string, string>();
  /** Set once this broker is shutting down. */
  private leaving = false;
  private readonly rebalancer: Rebalancer;
  private readonly announced = new Set<string>();
  private readonly sessions = new Map<string, RemoteSession>();
  private readonly server: CallServer;
  private readonly calls: RemoteCalls;
  /** Who signs the cluster's certificates: this broker while it holds the signer lease, else the one that does. */
  readonly signing: SigningService;
  private timer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private orphansTimer: NodeJS.Timeout | undefined;
  private applyingRevocation = false;
  /** When the samples of the agents held here were last shared. */
  private samplesSharedAt = 0;

  private constructor(
    private readonly bus: Bus,
    private readonly trust: BusTrust,
    private readonly registry: AgentRegistry,
    private readonly store: BrokerStore,
    private readonly options: ClusterOptions,
    private readonly log: Logger,
    deps: ClusterDeps,
  ) {
    super();
    this.calls = new RemoteCalls(bus, options.brokerId, () => [...this.lastBeat.keys()]);
    this.server = new CallServer({
      bus,
      registry,
      relay: { ...deps.relay, store, selfId: options.brokerId },
      audit: store.audit,
      refusals: deps.refusals,
      log,
    });
    this.rebalancer = new Rebalancer(registry, log);
    this.presenceBatches = new BusBatches<PresenceMessage>({ broker: options.brokerId }, 'presences', (json) => this.bus.publishJson(SUBJECTS.presences, json));
    this.reportBatches = new BusBatches<BatchedReport>({ broker: options.brokerId }, 'reports', (json) => {
      // An agent's presence goes before its reports: the others believe a report only from the broker they know holds it.
      this.presenceBatches.flush();
      this.bus.publishJson(SUBJECTS.reports, json);
    });
    this.signing = new SigningService(bus, store, deps.authority, options.brokerId, log);
  }

  get brokerId(): string {
    return this.options.brokerId;
  }

  /**
   * Joins the cluster: new bus keys certified by the fleet CA, registered on
   * the store (refused for an id the operator removed), then the bus, whose
   * credentials are checked (bus.ts).
   */
  static async start(options: ClusterOptions, deps: ClusterDeps, log: Logger): Promise<BrokerCluster> {
    const { store, authority } = deps;
    const keys = await newBusKeys(options.brokerId);
    // A broker that may sign certifies its own bus keys; the others wait for the one that signs (through the store: they are not on the bus yet).
    const signing = authority.set.signing();
    const key = authority.keyOf(signing);
    if (key !== undefined) keys.registration.certificatePem = certifyBusKeys({ certificatePem: signing.certificatePem, privateKeyPem: key }, keys.registration);
    const trust = new BusTrust(keys, store.brokers, () => authority.set.trusted().map((row) => row.certificatePem), log);
    const bus = await Bus.open(options, trust, log);
    try {
      if (!(await store.brokers.register(keys.registration))) {
        throw new FleetError('conflict', `broker id ${options.brokerId} was removed from the cluster by the operator`, {
          hint: 'Start this broker with another --broker-id (fleetmesh brokers lists the ids in use).',
        });
      }
      const pruned = await store.brokers.pruneStopped(Date.now() - STOPPED_BROKERS_KEPT_MS);
      if (pruned) log.info('registrations of brokers stopped long ago forgotten', { count: pruned });
      if (keys.registration.certificatePem === null) await awaitCertificate(store, keys, log);
    } catch (error) {
      await bus.close();
      throw error;
    }
    const cluster = new BrokerCluster(bus, trust, deps.registry, store, options, log, deps);
    cluster.listen();
    cluster.signing.start();
    return cluster;
  }

  /** Why cluster-wide work cannot be done now, or undefined (for /readyz). */
  problem(): string | undefined {
    return this.bus.problem();
  }

  /** Why the bus is weaker than it should be (--bus-insecure), for /readyz. */
  warnings(): readonly string[] {
    return this.bus.warnings;
  }

  /** Tells every other broker of a task's status, for their sessions of its identity. */
  shareTaskStatus(identityId: string, task: TaskWire): void {
    this.bus.publish(SUBJECTS.taskStatus, { broker: this.brokerId, identityId, task });
  }

  /** Bus messages dropped so far, by reason (for /metrics). */
  droppedMessages(): ReadonlyMap<DropReason, number> {
    return this.trust.dropCounts();
  }

  /** The brokers this one hears from, itself included. */
  brokers(): string[] {
    return [this.brokerId, ...this.lastBeat.keys()].sort();
  }

  /** Where agents reach the other brokers alive now, as they announced it: where a broker shutting down sends its agents. */
  otherAgentAddresses(): string[] {
    return [...this.lastBeat.keys()].flatMap((broker) => {
      const address = this.agentAddresses.get(broker);
      return address ? [address] : [];
    });
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.refreshTimer);
    await this.signing.stop();
    clearTimeout(this.orphansTimer);
    this.presenceBatches.flush();
    this.reportBatches.flush();
    // Written first: the others believe a `gone` only once the store says this broker stopped.
    await this.store.brokers.stopped(this.brokerId, Date.now()).catch((error: unknown) => {
      this.log.warn('could not record on the store that this broker stops', { error: (error as Error).message });
    });
    this.bus.publish(SUBJECTS.gone, { broker: this.brokerId });
    this.server.stop();
    await this.bus.close();
  }

  private listen(): void {
    const self = this.brokerId;
    /** A message naming a broker is believed only from that broker. */
    const speaksFor = (sender: string, broker: string, subject: string): boolean => {
      if (sender === broker) return true;
      this.bus.refuse('wrong_sender', { subject, sender, why: `it spoke as broker ${broker}` });
      return false;
    };
    /** In order: an agent this broker has not met yet is read from the store first. */
    const applyPresence = (messages: readonly PresenceMessage[]) => {
      this.presence = this.presence.then(async () => {
        for (const message of messages) {
          try {
            if (message.state !== 'offline' && !this.registry.get(message.agent)) await this.registry.refreshFromStore(message.agent);
            this.onPresence(message);
          } catch (error) {
            this.log.warn('could not apply a presence message', { agent: message.agent, error: (error as Error).message });
          }
        }
      });
    };
    this.bus.subscribe(SUBJECTS.presence, presenceMessage, ({ sender, message }) => {
      if (speaksFor(sender, message.broker, SUBJECTS.presence)) applyPresence([message]);
    });
    this.bus.subscribe(SUBJECTS.presences, presencesMessage, ({ sender, message }) => {
      if (speaksFor(sender, message.broker, SUBJECTS.presences))
        applyPresence(message.presences.filter((one) => speaksFor(sender, one.broker, SUBJECTS.presences)));
    });
    this.bus.subscribe(SUBJECTS.presenceSync, presenceSyncMessage, ({ sender, message }) => {
      if (!speaksFor(sender, message.broker, SUBJECTS.presenceSync)) return;
      this.heardFrom(sender);
      if (message.of !== undefined && message.of !== self) return;
      // A broker that just joined learns at once where agents reach this one, should it have to send some here.
      this.publishBeat();
      this.announceAll();
    });
    this.bus.subscribe(SUBJECTS.beat, beatMessage, ({ sender, message }) => {
      if (!speaksFor(sender, message.broker, SUBJECTS.beat)) return;
      this.heardFrom(sender);
      if (message.reportBatches) this.batchReaders.add(sender);
      else this.batchReaders.delete(sender);
      if (message.presenceBatches) this.presenceBatchReaders.add(sender);
      else this.presenceBatchReaders.delete(sender);
      if (message.leaving) this.agentAddresses.delete(sender);
      else if (message.agentAddress) this.agentAddresses.set(sender, message.agentAddress);
    });
    this.bus.subscribe(SUBJECTS.gone, brokerMessage, ({ sender, message }) => {
      if (!speaksFor(sender, message.broker, SUBJECTS.gone)) return;
      this.confirmed(
        SUBJECTS.gone,
        sender,
        async () => (await this.store.brokers.get(sender))?.stoppedAt != null,
        () => this.brokerLeft(sender, 'it is shutting down', false),
      );
    });
    const remoteReport = (sender: string, subject: string, report: BatchedReport) => {
      // Only the broker holding the agent passes its reports on.
      if (this.registry.get(report.agent)?.session?.heldBy !== sender) {
        this.bus.refuse('wrong_sender', { subject, sender, why: `it does not hold agent ${report.agent}` });
        return;
      }
      this.registry.remoteReport(report.agent, sender, report.kind, report.payload, report.observedUnixMs);
    };
    // After the presence messages heard before them, which may still wait on the store: an agent's first
    // inventory follows its presence from the broker that holds it, and was dropped when it overtook it.
    const remoteReports = (sender: string, subject: string, reports: readonly BatchedReport[]) => {
      this.presence = this.presence.then(() => {
        for (const report of reports) {
          try {
            remoteReport(sender, subject, report);
          } catch (error) {
            this.log.warn('could not apply a report of another broker', { agent: report.agent, error: (error as Error).message });
          }
        }
      });
    };
    this.bus.subscribe(SUBJECTS.report, reportMessage, ({ sender, message }) => {
      if (speaksFor(sender, message.broker, SUBJECTS.report)) remoteReports(sender, SUBJECTS.report, [message]);
    });
    this.bus.subscribe(SUBJECTS.reports, reportsMessage, ({ sender, message }) => {
      if (speaksFor(sender, message.broker, SUBJECTS.reports)) remoteReports(sender, SUBJECTS.reports, message.reports);
    });
    this.bus.subscribe(SUBJECTS.samples, samplesMessage, ({ sender, message }) => {
      if (!speaksFor(sender, message.broker, SUBJECTS.samples)) return;
      for (const { agent, sample, lastSeenAt } of message.samples) this.registry.remoteSample(agent, sender, sample as unknown as HostSample, lastSeenAt);
    });
    this.bus.subscribe(SUBJECTS.taskStatus, taskStatusMessage, ({ sender, message }) => {
      if (speaksFor(sender, message.broker, SUBJECTS.taskStatus)) this.emit('taskStatus', message.identityId, message.task);
    });
    this.bus.subscribe(SUBJECTS.revoked, revokedMessage, ({ sender, message }) => {
      if (!speaksFor(sender, message.broker, SUBJECTS.revoked)) return;
      this.confirmed(
        SUBJECTS.revoked,
        sender,
        async () => (await this.store.agents.get(message.agent))?.revokedAt != null,
        () => {
          this.applyingRevocation = true;
          try {
            this.registry.revokedElsewhere(message.agent);
          } finally {
            this.applyingRevocation = false;
          }
        },
      );
    });
    this.registry.on('state', (host) => this.onLocalState(host));
    this.registry.on('report', (host, kind, payload, observedUnixMs) => {
      if (!heldHere(host)) return;
      const report = { agent: host.id, kind, payload, observedUnixMs };
      // One at a time while a broker of an earlier version listens: it reads no batches.
      if (this.allRead(this.batchReaders)) this.reportBatches.add(report);
      else this.bus.publish(SUBJECTS.report, { broker: self, ...report });
    });
    this.registry.on('revoked', (host) => {
      if (!this.applyingRevocation) this.bus.publish(SUBJECTS.revoked, { broker: self, agent: host.id });
    });
    this.bus.on('disconnected', () => this.calls.busLost());
    this.bus.on('reconnected', () => {
      // Beats were missed by everyone while the bus was away: nobody has left for that.
      const now = Date.now();
      for (const broker of this.lastBeat.keys()) this.lastBeat.set(broker, now);
      this.bus.publish(SUBJECTS.presenceSync, { broker: self });
      this.announceAll();
    });
    this.server.start();
    this.timer = setInterval(() => this.beat(), this.options.beatIntervalMs);
    this.timer.unref();
    this.refreshTimer = setInterval(() => {
      this.trust.refresh().catch((error: unknown) => this.log.warn('could not read the registered brokers', { error: (error as Error).message }));
    }, REGISTRATIONS_REFRESH_MS);
    this.refreshTimer.unref();
    // By then every live broker has beaten at least once: a pending row of any other was left by one that is gone.
    this.orphansTimer = setTimeout(() => this.settleOrphans(), this.options.beatIntervalMs * (MISSED_BEATS + 1));
    this.orphansTimer.unref();
    this.bus.publish(SUBJECTS.presenceSync, { broker: self });
    this.announceAll();
  }

  /**
   * Acts on what another broker says happened (a revocation, its own
   * departure) only once the store, which that broker wrote first, says so.
   */
  private confirmed(subject: string, sender: string, check: () => Promise<boolean>, act: () => void): void {
    check()
      .then((holds) => {
        if (holds) act();
        else this.bus.refuse('unconfirmed', { subject, sender, why: 'the store does not say so' });
      })
      .catch((error: unknown) => this.log.warn('could not check a bus message against the store', { subject, error: (error as Error).message }));
  }

  /**
   * This broker is shutting down: the others stop sending agents here at
   * once, and it moves none of its own but to where they go.
   */
  leave(): void {
    this.leaving = true;
    this.publishBeat();
  }

  private publishBeat(): void {
    if (!this.bus.connected) return;
    const { agentAddress } = this.options;
    this.bus.publish(SUBJECTS.beat, {
      broker: this.brokerId,
      reportBatches: true,
      presenceBatches: true,
      ...(this.leaving ? { leaving: true as const } : agentAddress ? { agentAddress } : {}),
    });
  }

  /**
   * A broker spoke. One this broker does not count as alive (new, or counted
   * gone while it was only silent: its event loop held, its bus stalled) is
   * asked which agents it holds, since its agents were let go here when it
   * was counted gone, and nothing else would tell of those that stayed on it.
   */
  private heardFrom(broker: string): void {
    if (!this.lastBeat.has(broker) && broker !== this.brokerId) this.bus.publish(SUBJECTS.presenceSync, { broker: this.brokerId, of: broker });
    this.lastBeat.set(broker, Date.now());
  }

  private beat(): void {
    if (!this.bus.connected) return;
    this.publishBeat();
    this.shareSamples();
    const silentAfterMs = Math.max(this.options.beatIntervalMs * MISSED_BEATS, SILENT_FLOOR_MS);
    const now = Date.now();
    // A beat the event loop ran late runs before the bus messages that waited with it: it counts nobody gone.
    const late = this.lastBeatAt !== undefined && now - this.lastBeatAt > this.options.beatIntervalMs * 2;
    this.lastBeatAt = now;
    for (const [broker, at] of late ? [] : this.lastBeat) {
      if (now - at > silentAfterMs) this.brokerLeft(broker, `no word from it for ${now - at} ms`);
    }
    if (!this.leaving) this.rebalancer.beat(this.brokers(), this.agentAddresses, this.brokerId);
  }

  /** The samples heartbeats brought since the last beat, in one message: status answers the same everywhere. */
  private shareSamples(): void {
    const since = this.samplesSharedAt;
    this.samplesSharedAt = Date.now();
    const samples = this.registry
      .held()
      .filter((host) => host.sample !== null && (host.lastHeartbeatAt ?? 0) > since)
      .map((host) => ({ agent: host.id, sample: host.sample as unknown as Record<string, unknown>, lastSeenAt: host.lastSeenAt ?? 0 }));
    if (samples.length) this.bus.publish(SUBJECTS.samples, { broker: this.brokerId, samples });
  }

  private brokerLeft(broker: string, reason: string, died = true): void {
    if (!this.lastBeat.delete(broker)) return;
    this.agentAddresses.delete(broker);
    this.batchReaders.delete(broker);
    this.presenceBatchReaders.delete(broker);
    this.log.warn('broker left the cluster; its agents are offline until they reconnect', { broker, reason });
    // A broker shutting down completes its own rows; one that died never will.
    if (died) {
      this.settleAudit([broker], `broker ${broker} left the cluster (${reason}) before the call completed`);
      this.settleTasks({ brokerIds: [broker] }, `broker ${broker} left the cluster (${reason}) before the task ended`);
    }
    this.calls.brokerGone(broker);
    for (const host of this.registry.list()) {
      if (host.session?.heldBy === broker) this.registry.releaseRemote(host.id, broker, { record: true });
    }
    for (const [agentId, session] of this.sessions) if (session.heldBy === broker) this.sessions.delete(agentId);
  }

  /**
   * Audit rows the named brokers began and never completed: `interrupted`,
   * with a note (every broker that notices does it; the second finds none).
   * A broker thought dead that was only unreachable still completes its rows
   * later, and its outcome then replaces this one.
   */
  private settleAudit(brokerIds: string[], note: string): void {
    this.store.audit
      .markInterrupted(Date.now(), { brokerIds, note })
      .then((count) => {
        if (count) this.log.warn('audit rows of a broker that left marked interrupted', { brokers: brokerIds.join(','), count });
      })
      .catch((error: unknown) => this.log.warn('could not settle the audit rows of a broker that left', { error: (error as Error).message }));
  }

  /** MCP tasks the brokers left working: failed, their result what the audit knows (mcp/tasks/interrupted-result.ts). */
  private settleTasks(scope: { brokerIds?: string[]; except?: string[] }, statusMessage: string): void {
    this.store.mcpTasks
      .interrupt(scope, statusMessage, Date.now())
      .then((count) => {
        if (count) this.log.warn('MCP tasks of a broker that left marked failed', { count });
      })
      .catch((error: unknown) => this.log.warn('could not end the MCP tasks of a broker that left', { error: (error as Error).message }));
  }

  /** Pending rows of brokers nobody hears from (they died while no broker was listening, or before this one started). */
  private settleOrphans(): void {
    // Cut off from the bus, this broker cannot tell who is alive.
    if (!this.bus.connected) return;
    const alive = this.brokers();
    this.settleTasks({ except: alive }, BROKER_STOPPED);
    this.store.audit
      .markInterrupted(Date.now(), { except: alive, note: 'the broker that began the call stopped before completing it' })
      .then((count) => {
        if (count) this.log.warn('audit rows of brokers no longer in the cluster marked interrupted', { count });
      })
      .catch((error: unknown) => this.log.warn('could not settle the audit rows of brokers that left', { error: (error as Error).message }));
  }

  /** Presence messages and the reports heard after them, applied one after another. */
  private presence: Promise<void> = Promise.resolve();

  private onPresence(message: PresenceMessage): void {
    if (!this.lastBeat.has(message.broker)) this.heardFrom(message.broker);
    if (message.state === 'offline') {
      this.registry.releaseRemote(message.agent, message.broker);
      const session = this.sessions.get(message.agent);
      if (session?.heldBy === message.broker) this.sessions.delete(message.agent);
    } else {
      let session = this.sessions.get(message.agent);
      if (session?.heldBy !== message.broker || session.connectedAt !== message.connectedAt) {
        session = new RemoteSession(message.broker, message.agent, message.connectedAt, this.calls);
        this.sessions.set(message.agent, session);
      }
      this.registry.holdRemote(message.agent, session, {
        state: message.state,
        hello: message.hello as StoredHello | null,
        labels: message.labels,
        lastSeenAt: message.lastSeenAt,
      });
    }
    this.server.follow(message.agent, heldHere(this.registry.get(message.agent)));
  }

  /** A state change of an agent here (or of one that just left here): the others hear of it. */
  private onLocalState(host: Host): void {
    if (heldHere(host)) {
      this.announced.add(host.id);
      this.announce(host);
    } else if (this.announced.delete(host.id) && host.session === undefined) {
      this.sendPresence({
        broker: this.brokerId,
        agent: host.id,
        state: 'offline',
        connectedAt: 0,
        hello: null,
        labels: {},
        lastSeenAt: host.lastSeenAt,
      });
    }
    this.server.follow(host.id, heldHere(host));
  }

  private announce(host: Host): void {
    this.sendPresence({
      broker: this.brokerId,
      agent: host.id,
      state: host.state,
      connectedAt: host.session?.connectedAt ?? 0,
      hello: host.hello as Record<string, unknown> | null,
      labels: host.labels,
      lastSeenAt: host.lastSeenAt,
    });
  }

  /** Whether every broker alive now said on its beat that it reads a kind of batch. */
  private allRead(readers: ReadonlySet<string>): boolean {
    return [...this.lastBeat.keys()].every((broker) => readers.has(broker));
  }

  /** In a batch when every broker listening reads them; one at a time, after what waits, while one of an earlier version listens. */
  private sendPresence(message: PresenceMessage): void {
    if (this.allRead(this.presenceBatchReaders)) {
      this.presenceBatches.add(message);
    } else {
      this.presenceBatches.flush();
      this.bus.publish(SUBJECTS.presence, message);
    }
  }

  private announceAll(): void {
    for (const host of this.registry.held()) {
      this.announced.add(host.id);
      this.announce(host);
    }
  }
}

import { EventEmitter } from 'node:events';
import type { HostSample } from '../../shared/catalog/sample.ts';
import type { Sample } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { GrpcCode } from '../../shared/grpc/status-codes.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { type ContainerFigures, containersFromWire, sampleFromWire } from '../../shared/wire/sample-codec.ts';
import { revokeAgent } from '../admin/revoke-agent.ts';
import type { RoleGrant } from '../store/agent-roles-table.ts';
import type { AgentRow, AgentState, StoredHello } from '../store/agents-table.ts';
import { effectiveLabels } from '../store/agents-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { AgentSession, HostSession } from './agent-session.ts';
import { sharedHello } from './shared-hellos.ts';

/**
 * The shortest silence after which the broker ends an agent's stream, whatever
 * the heartbeat interval: a garbage collection or a busy event loop on either
 * side can hold heartbeats back for a second or two.
 */
const MIN_OFFLINE_GRACE_MS = 3000;

/** Everything the broker knows about one enrolled agent, connected or not. */
export interface Host {
  id: string;
  name: string;
  /** Labels as selectors of reads see them: the agent's own, overridden by the operator's (join token). */
  labels: Record<string, string>;
  /** Labels only the operator gave (join token): what selectors of mutations match. */
  operatorLabels: Record<string, string>;
  /** Roles over shared objects the operator granted; a claim not covered here must be proven (claims.ts). */
  roles: RoleGrant[];
  state: AgentState;
  session: HostSession | undefined;
  hello: StoredHello | null;
  version: string;
  enrolledAt: number;
  lastSeenAt: number | null;
  lastHeartbeatAt: number | null;
  sample: HostSample | null;
  /** The container figures of the latest heartbeat that carried them (about once a minute). */
  containerSamples: ContainerFigures[];
  containerSamplesAt: number | null;
  certNotAfter: number | null;
  /** When the current state began. */
  stateSince: number;
}

interface AgentRegistryOptions {
  heartbeatIntervalMs: number;
  /** Heartbeats missed before a connected host is `stale`. */
  staleAfterMissed: number;
  /** Heartbeats missed before the broker ends a silent host's stream, so it is `offline` (always after `stale`). */
  offlineAfterMissed: number;
  /** How often to look for admin commands' changes (revocations, enrollments) in the store. */
  storePollMs: number;
  /**
   * Other brokers share the store (a cluster): start and stop mark offline
   * only the agents this broker held, not the whole fleet.
   */
  sharedStore?: boolean;
}

/** What the broker holding an agent's stream says about it (broker/cluster/presence.ts). */
interface RemotePresence {
  state: AgentState;
  hello: StoredHello | null;
  labels: Record<string, string>;
  lastSeenAt: number | null;
}

interface RegistryEvents {
  state: [host: Host, previous: AgentState];
  heartbeat: [host: Host];
  revoked: [host: Host];
  /** Something an agent saw happen (a container event…), for the indexes that follow the fleet. */
  report: [host: Host, kind: string, payload: unknown, observedUnixMs: number];
}

function hostFromRow(row: AgentRow, roles: RoleGrant[]): Host {
  return {
    id: row.id,
    name: row.name,
    labels: effectiveLabels(row),
    operatorLabels: row.tokenLabels,
    roles,
    state: 'offline',
    session: undefined,
    hello: row.hello && sharedHello(row.hello),
    version: row.version,
    enrolledAt: row.enrolledAt,
    lastSeenAt: row.lastSeenAt,
    lastHeartbeatAt: null,
    sample: null,
    containerSamples: [],
    containerSamplesAt: null,
    certNotAfter: row.certNotAfter,
    stateSince: Date.now(),
  };
}

/**
 * The live view of the fleet: which agents are enrolled, which are connected
 * and through which session, and whether they are `online`, `stale` (connected
 * but silent for `staleAfterMissed` heartbeats) or `offline` (no stream).
 * States are mirrored into the store, so `fleetmesh agents` in another process
 * sees them.
 */
export class AgentRegistry extends EventEmitter<RegistryEvents> {
  private readonly hosts = new Map<string, Host>();
  private readonly seen = new Map<string, number>();
  /** The hosts in name order, until one comes, goes or is renamed: sessions and reads list the fleet at every change, and sorting 10,000 names each time showed in profiles. */
  private byName: Host[] | undefined;
  private timers: NodeJS.Timeout[] = [];
  private lastDataVersion = '';
  private polling = false;
  /** Store writes of states and last-seen times, kept in the order they happened. */
  private writes: Promise<void> = Promise.resolve();
  /** Writes waiting for the next batch (persist). */
  private queued: { what: string; write: () => Promise<unknown> }[] = [];
  /** The state changes of the last write queued, while nothing else was queued after it: more join it. */
  private openStates: Map<string, { state: AgentState; lastSeenAt: number | null }> | undefined;

  constructor(
    private readonly store: BrokerStore,
    private readonly options: AgentRegistryOptions,
    private readonly log: Logger,
  ) {
    super();
  }

  async start(): Promise<void> {
    // A store of this broker alone: nobody is connected yet, whatever the last run left. A shared one
    // holds the states of agents other brokers hold.
    if (!this.sharedStore) await this.store.agents.markAllOffline();
    const roles = await this.store.roles.all();
    for (const row of await this.store.agents.list()) this.hosts.set(row.id, hostFromRow(row, roles.get(row.id) ?? []));
    this.byName = undefined;
    this.lastDataVersion = await this.store.dataVersion();
    const sweepMs = Math.max(25, Math.floor(this.options.heartbeatIntervalMs / 4));
    let sweptAt = Date.now();
    let judgeFrom = 0;
    this.timers = [
      setInterval(() => {
        const now = Date.now();
        // After the broker's own event loop stalled for a whole heartbeat interval, every agent gets
        // one more interval to be heard before it is judged: its beats may wait in a socket unread.
        if (now - sweptAt > this.options.heartbeatIntervalMs) judgeFrom = now + this.options.heartbeatIntervalMs;
        sweptAt = now;
        if (now >= judgeFrom) this.sweep(now);
      }, sweepMs),
      setInterval(() => this.flushSeen(), Math.max(1000, this.options.heartbeatIntervalMs)),
      setInterval(() => void this.pollStore(), this.options.storePollMs),
    ];
    for (const timer of this.timers) timer.unref();
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    const held = this.held().map((host) => host.id);
    for (const host of this.hosts.values()) {
      host.session?.close({ code: GrpcCode.UNAVAILABLE, details: 'the broker is shutting down' });
      host.session = undefined;
    }
    this.flushSeen();
    if (!this.sharedStore) this.persist('agent states', () => this.store.agents.markAllOffline());
    for (const id of this.sharedStore ? held : []) this.recordState(id, 'offline', null);
    await this.writes;
  }

  /** Whether other brokers share the store: then only the agents this one holds are its to mark. */
  private get sharedStore(): boolean {
    return this.store.shared || this.options.sharedStore === true;
  }

  /** The hosts whose agent's stream this broker holds. */
  held(): Host[] {
    return [...this.hosts.values()].filter((host) => host.session !== undefined && host.session.heldBy === undefined);
  }

  /** The open streams this broker holds (a session no other broker holds is one of ours). */
  localSessions(): AgentSession[] {
    return this.held().flatMap((host) => (host.session?.isOpen ? [host.session as AgentSession] : []));
  }

  /**
   * Another broker holds this agent's stream (or says how it is): calls go
   * through `session`. Ignored while this broker holds a newer stream of the
   * same agent; an older one here is closed, as a second stream replaces the
   * first. Streams are compared by when each broker saw them open, so brokers'
   * clocks are expected to agree (NTP) to well under an agent's reconnect delay.
   */
  holdRemote(agentId: string, session: HostSession, presence: RemotePresence): void {
    // An agent enrolled since this broker last read the store is read first (refreshFromStore).
    const host = this.hosts.get(agentId);
    if (!host) return;
    const local = host.session && host.session.heldBy === undefined ? host.session : undefined;
    if (local?.isOpen) {
      if (local.connectedAt >= session.connectedAt) return;
      this.log.info('agent stream replaced by a newer one on another broker', { agent: host.name, broker: session.heldBy });
      local.close({ code: GrpcCode.ABORTED, details: 'replaced by a newer stream from the same agent' });
    }
    host.session = session;
    host.hello = presence.hello && sharedHello(presence.hello);
    host.version = presence.hello?.agent_version ?? host.version;
    host.labels = { ...presence.labels, ...host.operatorLabels };
    host.lastSeenAt = presence.lastSeenAt;
    this.setState(host, presence.state, host.state, { record: false });
  }

  /**
   * The broker that held this agent's stream lost it: offline, unless it moved
   * since. `record` when that broker is gone and can no longer write it itself.
   */
  releaseRemote(agentId: string, brokerId: string, { record = false } = {}): void {
    const host = this.hosts.get(agentId);
    if (!host || host.session?.heldBy !== brokerId) return;
    host.session = undefined;
    this.setState(host, 'offline', host.state, { record });
  }

  /** A report an agent sent to the broker holding it, passed on over the bus by that broker (and no other). */
  remoteReport(agentId: string, brokerId: string, kind: string, payload: unknown, observedUnixMs: number): void {
    const host = this.hosts.get(agentId);
    if (!host || host.session?.heldBy !== brokerId) return;
    this.emit('report', host, kind, payload, observedUnixMs);
  }

  /** The latest heartbeat sample of an agent another broker holds. */
  remoteSample(agentId: string, brokerId: string, sample: HostSample, lastSeenAt: number): void {
    const host = this.hosts.get(agentId);
    if (!host || host.session?.heldBy !== brokerId) return;
    host.sample = sample;
    host.lastSeenAt = lastSeenAt;
  }

  /** Another broker revoked this agent: forget it and close its stream if it is here. */
  revokedElsewhere(agentId: string): void {
    this.dropRevoked(agentId);
  }

  list(): Host[] {
    this.byName ??= [...this.hosts.values()].sort((a, b) => a.name.localeCompare(b.name));
    return this.byName.slice();
  }

  get(id: string): Host | undefined {
    return this.hosts.get(id);
  }

  /** By id, or by name (case-insensitive). */
  find(idOrName: string): Host | undefined {
    const byId = this.hosts.get(idOrName);
    if (byId) return byId;
    const lower = idOrName.toLowerCase();
    return [...this.hosts.values()].find((host) => host.name.toLowerCase() === lower);
  }

  /** An agent enrolled (or re-enrolled) through this broker: pick up its row. */
  async refreshFromStore(agentId: string, known?: { roles: RoleGrant[]; row: AgentRow }): Promise<void> {
    const roles = known?.roles ?? (await this.store.roles.of(agentId));
    const row = known?.row ?? (await this.store.agents.get(agentId));
    if (!row || row.revokedAt !== null) return;
    const existing = this.hosts.get(agentId);
    if (existing) {
      const rolesChanged = JSON.stringify(existing.roles) !== JSON.stringify(roles);
      if (existing.name !== row.name) this.byName = undefined;
      existing.name = row.name;
      existing.labels = effectiveLabels(row);
      existing.operatorLabels = row.tokenLabels;
      existing.roles = roles;
      existing.certNotAfter = row.certNotAfter;
      existing.enrolledAt = row.enrolledAt;
      // An approval (or its withdrawal) changes what the agent may report and serve.
      if (rolesChanged) this.emit('state', existing, existing.state);
    } else {
      this.hosts.set(agentId, hostFromRow(row, roles));
      this.byName = undefined;
    }
  }

  /**
   * A new stream proved to be this agent: it becomes the agent's session,
   * replacing any earlier one. Undefined when the stream ended while the store answered.
   * `known`: the agent's row, read as the stream was authenticated.
   */
  async attach(session: AgentSession, hello: StoredHello, reportedLabels: Record<string, string>, known?: AgentRow): Promise<Host | undefined> {
    const row = known?.id === session.agentId ? known : await this.store.agents.get(session.agentId);
    if (!row) throw new Error(`agent ${session.agentId} is not in the store`);
    const roles = this.hosts.has(row.id) ? [] : await this.store.roles.of(row.id);
    if (!session.isOpen) return undefined;
    const now = Date.now();
    const host = this.hosts.get(row.id) ?? hostFromRow(row, roles);
    if (!this.hosts.has(row.id) || host.name !== row.name) this.byName = undefined;
    this.hosts.set(row.id, host);
    const previousSession = host.session;
    const previousState = host.state;
    host.session = session;
    host.hello = sharedHello(hello);
    host.version = hello.agent_version;
    host.name = row.name;
    host.labels = { ...reportedLabels, ...row.tokenLabels };
    host.operatorLabels = row.tokenLabels;
    host.certNotAfter = row.certNotAfter;
    host.lastHeartbeatAt = now;
    host.lastSeenAt = now;
    this.persist('an agent hello', () => this.store.agents.recordHello(row.id, { version: hello.agent_version, hello, reportedLabels, now }));
    if (previousSession && previousSession !== session) {
      this.log.info('agent stream replaced by a newer one', { agent: host.name });
      previousSession.close({ code: GrpcCode.ABORTED, details: 'replaced by a newer stream from the same agent' });
    }
    this.setState(host, 'online', previousState);
    // Moved here from another broker: the state is the same, the holder is not.
    if (previousState === 'online' && previousSession?.heldBy !== undefined) this.emit('state', host, previousState);
    return host;
  }

  /** The agent re-announced itself on its live stream (labels or collectors changed). */
  updateHello(session: AgentSession, hello: StoredHello, reportedLabels: Record<string, string>): void {
    const host = this.hosts.get(session.agentId);
    if (!host || host.session !== session) return;
    host.hello = sharedHello(hello);
    host.labels = { ...reportedLabels, ...host.operatorLabels };
    const now = Date.now();
    this.persist('an agent hello', () => this.store.agents.recordHello(host.id, { version: hello.agent_version, hello, reportedLabels, now }));
    this.emit('state', host, host.state);
  }

  /** A stream ended; the host goes offline unless a newer stream already replaced it. */
  detach(session: AgentSession, reason: string): void {
    session.markEnded();
    const host = this.hosts.get(session.agentId);
    if (!host || host.session !== session) return;
    host.session = undefined;
    this.log.info('agent disconnected', { agent: host.name, reason });
    this.setState(host, 'offline', host.state);
  }

  heartbeat(session: AgentSession, sample: Sample | undefined): void {
    const host = this.hosts.get(session.agentId);
    if (!host || host.session !== session) return;
    const now = Date.now();
    host.lastHeartbeatAt = now;
    host.lastSeenAt = now;
    host.sample = sampleFromWire(sample, now) ?? host.sample;
    if (sample?.containers.length) {
      host.containerSamples = containersFromWire(sample.containers);
      host.containerSamplesAt = now;
    }
    this.seen.set(host.id, now);
    if (host.state !== 'online') this.setState(host, 'online', host.state);
    this.emit('heartbeat', host);
  }

  report(session: AgentSession, kind: string, payload: unknown, observedUnixMs: number): void {
    const host = this.hosts.get(session.agentId);
    if (!host || host.session !== session) return;
    this.emit('report', host, kind, payload, observedUnixMs);
  }

  /** Revokes an agent known to this broker: its certificates, its row, and its live stream at once. */
  async revoke(agentId: string, reason: string, now = Date.now()): Promise<string[]> {
    const serials = await revokeAgent(this.store, agentId, reason, now);
    this.dropRevoked(agentId);
    return serials;
  }

  /**
   * Marks connected hosts stale when their heartbeats stop, and ends the
   * stream of a host silent past the grace. The broker's own heartbeat clock
   * decides both, in that order: a silent agent is never offline before it
   * was stale (gRPC keepalive, which once raced this, waits longer; see mesh-server.ts).
   */
  sweep(now: number): void {
    const staleAfterMs = this.options.heartbeatIntervalMs * this.options.staleAfterMissed;
    const offlineAfterMs = Math.max(
      this.options.heartbeatIntervalMs * Math.max(this.options.offlineAfterMissed, this.options.staleAfterMissed + 1),
      MIN_OFFLINE_GRACE_MS,
    );
    for (const host of this.hosts.values()) {
      const session = host.session;
      // Another broker sweeps the agents it holds.
      if (!session || session.heldBy !== undefined || host.lastHeartbeatAt === null) continue;
      const local = session as AgentSession;
      const silentMs = now - host.lastHeartbeatAt;
      if (host.state === 'online' && silentMs >= staleAfterMs) {
        this.log.warn('agent stale: heartbeats missed', { agent: host.name, silent_ms: silentMs });
        this.setState(host, 'stale', 'online');
      } else if (host.state === 'stale' && silentMs >= offlineAfterMs) {
        const reason = `no heartbeat for ${silentMs} ms`;
        local.close({ code: GrpcCode.UNAVAILABLE, details: reason });
        this.detach(local, reason);
      }
    }
  }

  /** `record: false` for states another broker reports: the one holding the stream writes them. */
  private setState(host: Host, state: AgentState, previous: AgentState, { record = true } = {}): void {
    host.state = state;
    if (state !== previous) {
      host.stateSince = Date.now();
      const lastSeenAt = host.lastSeenAt;
      if (record) this.recordState(host.id, state, lastSeenAt);
      this.emit('state', host, previous);
    }
  }

  /**
   * Queues a state change, in one statement with the others queued since the
   * last other write (a broker counted gone leaves thousands of agents
   * offline at once); a later change of the same agent in it replaces the
   * earlier one, as nothing about that agent was queued between them.
   */
  private recordState(agentId: string, state: AgentState, lastSeenAt: number | null): void {
    if (this.openStates) {
      this.openStates.set(agentId, { state, lastSeenAt });
      return;
    }
    const states = new Map([[agentId, { state, lastSeenAt }]]);
    this.persist('agent states', () => this.store.agents.setStates(states));
    this.openStates = states;
  }

  private flushSeen(): void {
    if (this.seen.size === 0) return;
    const batch = new Map(this.seen);
    this.seen.clear();
    this.persist('last-seen times', () => this.store.agents.touch(batch));
  }

  /**
   * Queues a store write after the earlier ones. The writes queued while the
   * event loop turns are committed together, in one transaction: a commit of
   * the embedded store waits for the disk (synchronous = FULL) with the loop
   * held, and one commit per hello and per state change kept a broker taking
   * back 2,000 agents waiting on fsync (docs/performance.md). A failed write is
   * logged, and memory stays this broker's truth.
   */
  private persist(what: string, write: () => Promise<unknown>): void {
    this.openStates = undefined;
    this.queued.push({ what, write });
    if (this.queued.length > 1) return;
    this.writes = this.writes.then(() => new Promise((resolve) => setImmediate(resolve))).then(() => this.commitQueued());
  }

  private async commitQueued(): Promise<void> {
    const batch = this.queued;
    this.queued = [];
    this.openStates = undefined;
    if (batch.length > 1) {
      try {
        await this.store.transaction(async () => {
          for (const { write } of batch) await write();
        });
        return;
      } catch {
        // The whole batch rolled back: run it again write by write, so only a failing write is lost.
      }
    }
    for (const { what, write } of batch) {
      try {
        await write();
      } catch (error) {
        this.log.warn(`could not record ${what}`, { error: (error as Error).message });
      }
    }
  }

  private dropRevoked(agentId: string): void {
    const host = this.hosts.get(agentId);
    if (!host) return;
    this.hosts.delete(agentId);
    this.byName = undefined;
    if (host.session) {
      this.log.info('closing the stream of a revoked agent', { agent: host.name });
      host.session.close({ code: GrpcCode.PERMISSION_DENIED, details: `agent ${host.name} has been revoked` });
      host.session = undefined;
    }
    host.state = 'offline';
    this.emit('revoked', host);
  }

  /** Admin commands write the store from other processes; pick up what they changed. */
  private async pollStore(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const version = await this.store.dataVersion();
      if (version === this.lastDataVersion) return;
      const rows = await this.store.agents.list({ includeRevoked: true });
      const roles = await this.store.roles.all();
      for (const row of rows) {
        if (row.revokedAt !== null) this.dropRevoked(row.id);
        else await this.refreshFromStore(row.id, { roles: roles.get(row.id) ?? [], row });
      }
      this.lastDataVersion = version;
    } catch {
      // The store does not answer: try again at the next poll.
    } finally {
      this.polling = false;
    }
  }
}

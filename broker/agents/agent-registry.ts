import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import type { HostSample } from '../../shared/catalog/sample.ts';
import type { Sample } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { type ContainerFigures, containersFromWire, sampleFromWire } from '../../shared/wire/sample-codec.ts';
import { revokeAgent } from '../admin/revoke-agent.ts';
import type { RoleGrant } from '../store/agent-roles-table.ts';
import type { AgentRow, AgentState, StoredHello } from '../store/agents-table.ts';
import { effectiveLabels } from '../store/agents-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { AgentSession } from './agent-session.ts';

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
  session: AgentSession | undefined;
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

export interface AgentRegistryOptions {
  heartbeatIntervalMs: number;
  /** Heartbeats missed before a connected host is `stale`. */
  staleAfterMissed: number;
  /** Heartbeats missed before the broker ends a silent host's stream, so it is `offline` (always after `stale`). */
  offlineAfterMissed: number;
  /** How often to look for admin commands' changes (revocations, enrollments) in the store. */
  storePollMs: number;
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
    hello: row.hello,
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
  private timers: NodeJS.Timeout[] = [];
  private lastDataVersion = 0;

  constructor(
    private readonly store: BrokerStore,
    private readonly options: AgentRegistryOptions,
    private readonly log: Logger,
  ) {
    super();
  }

  start(): void {
    this.store.agents.markAllOffline();
    const roles = this.store.roles.all();
    for (const row of this.store.agents.list()) this.hosts.set(row.id, hostFromRow(row, roles.get(row.id) ?? []));
    this.lastDataVersion = this.store.dataVersion();
    const sweepMs = Math.max(25, Math.floor(this.options.heartbeatIntervalMs / 4));
    this.timers = [
      setInterval(() => this.sweep(Date.now()), sweepMs),
      setInterval(() => this.flushSeen(), Math.max(1000, this.options.heartbeatIntervalMs)),
      setInterval(() => this.pollStore(), this.options.storePollMs),
    ];
    for (const timer of this.timers) timer.unref();
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    for (const host of this.hosts.values()) {
      host.session?.close({ code: grpc.status.UNAVAILABLE, details: 'the broker is shutting down' });
      host.session = undefined;
    }
    this.flushSeen();
    this.record('agent states', () => this.store.agents.markAllOffline());
  }

  list(): Host[] {
    return [...this.hosts.values()].sort((a, b) => a.name.localeCompare(b.name));
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
  refreshFromStore(agentId: string, roles = this.store.roles.all().get(agentId) ?? []): void {
    const row = this.store.agents.get(agentId);
    if (!row || row.revokedAt !== null) return;
    const existing = this.hosts.get(agentId);
    if (existing) {
      const rolesChanged = JSON.stringify(existing.roles) !== JSON.stringify(roles);
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
    }
  }

  /** A new stream proved to be this agent: it becomes the agent's session, replacing any earlier one. */
  attach(session: AgentSession, hello: StoredHello, reportedLabels: Record<string, string>): Host {
    const row = this.store.agents.get(session.agentId);
    if (!row) throw new Error(`agent ${session.agentId} is not in the store`);
    const now = Date.now();
    const host = this.hosts.get(row.id) ?? hostFromRow(row, this.store.roles.all().get(row.id) ?? []);
    this.hosts.set(row.id, host);
    const previousSession = host.session;
    const previousState = host.state;
    host.session = session;
    host.hello = hello;
    host.version = hello.agent_version;
    host.name = row.name;
    host.labels = { ...reportedLabels, ...row.tokenLabels };
    host.operatorLabels = row.tokenLabels;
    host.certNotAfter = row.certNotAfter;
    host.lastHeartbeatAt = now;
    host.lastSeenAt = now;
    this.record('an agent hello', () => this.store.agents.recordHello(row.id, { version: hello.agent_version, hello, reportedLabels, now }));
    if (previousSession && previousSession !== session) {
      this.log.info('agent stream replaced by a newer one', { agent: host.name });
      previousSession.close({ code: grpc.status.ABORTED, details: 'replaced by a newer stream from the same agent' });
    }
    this.setState(host, 'online', previousState);
    return host;
  }

  /** The agent re-announced itself on its live stream (labels or collectors changed). */
  updateHello(session: AgentSession, hello: StoredHello, reportedLabels: Record<string, string>): void {
    const host = this.hosts.get(session.agentId);
    if (!host || host.session !== session) return;
    const row = this.store.agents.get(host.id);
    host.hello = hello;
    host.labels = { ...reportedLabels, ...(row?.tokenLabels ?? {}) };
    this.record('an agent hello', () => this.store.agents.recordHello(host.id, { version: hello.agent_version, hello, reportedLabels, now: Date.now() }));
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
  revoke(agentId: string, reason: string, now = Date.now()): string[] {
    const serials = revokeAgent(this.store, agentId, reason, now);
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
    const offlineAfterMs = this.options.heartbeatIntervalMs * Math.max(this.options.offlineAfterMissed, this.options.staleAfterMissed + 1);
    for (const host of this.hosts.values()) {
      const session = host.session;
      if (!session || host.lastHeartbeatAt === null) continue;
      const silentMs = now - host.lastHeartbeatAt;
      if (host.state === 'online' && silentMs >= staleAfterMs) {
        this.log.warn('agent stale: heartbeats missed', { agent: host.name, silent_ms: silentMs });
        this.setState(host, 'stale', 'online');
      } else if (host.state === 'stale' && silentMs >= offlineAfterMs) {
        const reason = `no heartbeat for ${silentMs} ms`;
        session.close({ code: grpc.status.UNAVAILABLE, details: reason });
        this.detach(session, reason);
      }
    }
  }

  private setState(host: Host, state: AgentState, previous: AgentState): void {
    host.state = state;
    if (state !== previous) {
      host.stateSince = Date.now();
      this.record('an agent state', () => this.store.agents.setState(host.id, state, host.lastSeenAt));
      this.emit('state', host, previous);
    }
  }

  /**
   * Mirrors the live view into the store for other processes to read. The
   * live view is the truth: a write the store refuses (its disk is full) is
   * logged and the fleet goes on being served.
   */
  private record(what: string, write: () => void): void {
    try {
      write();
    } catch (error) {
      this.log.warn(`could not record ${what} in the store`, { error: (error as Error).message });
    }
  }

  private flushSeen(): void {
    if (this.seen.size === 0) return;
    const batch = new Map(this.seen);
    this.seen.clear();
    try {
      this.store.agents.touch(batch);
    } catch (error) {
      this.log.warn('could not record last-seen times', { error });
    }
  }

  private dropRevoked(agentId: string): void {
    const host = this.hosts.get(agentId);
    if (!host) return;
    this.hosts.delete(agentId);
    if (host.session) {
      this.log.info('closing the stream of a revoked agent', { agent: host.name });
      host.session.close({ code: grpc.status.PERMISSION_DENIED, details: `agent ${host.name} has been revoked` });
      host.session = undefined;
    }
    host.state = 'offline';
    this.emit('revoked', host);
  }

  /** Admin commands write the store from other processes; pick up what they changed. */
  private pollStore(): void {
    let version: number;
    try {
      version = this.store.dataVersion();
    } catch {
      return;
    }
    if (version === this.lastDataVersion) return;
    this.lastDataVersion = version;
    const rows = new Map(this.store.agents.list({ includeRevoked: true }).map((row) => [row.id, row]));
    const roles = this.store.roles.all();
    for (const [id, row] of rows) {
      if (row.revokedAt !== null) this.dropRevoked(id);
      else this.refreshFromStore(id, roles.get(id) ?? []);
    }
  }
}

import { EventEmitter } from 'node:events';
import { reportSchemas } from '../../shared/domains/domains.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import { assessClaims, statedClaims } from '../agents/claims.ts';
import { AGENT_ROLES, BROKER_DOMAINS } from '../domains/broker-domains.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { hostDigest, hostRows } from './host-resources.ts';
import type { IndexContext, Indexer, IndexerClass } from './indexer.ts';
import type { Notice } from './notice.ts';
import type { Digest, Resource, RowFilter } from './resource.ts';

/** Why a report was dropped, for /metrics. */
export type DropReason = 'malformed' | 'not_role_holder' | 'unknown_kind';

/** Counts the reports the index refused (BrokerMetrics implements it). */
export interface ReportRecorder {
  reportDropped(kind: string, reason: DropReason): void;
}

/** The report kinds the domains declare, each with the schema a report must pass first. */
const REPORT_SCHEMAS = reportSchemas();

/** At most one warning per agent in this time, however many bad reports it sends. */
const WARN_EVERY_MS = 60_000;

interface IndexEvents {
  /** `listed` false when the things listed stayed the same (see IndexContext.changed). */
  changed: [what: string, key: string, listed: boolean];
  /** A domain's indexer raised a notice (notifications send it out). */
  notice: [notice: Notice];
}

/**
 * What the broker knows of the fleet's resources, kept current from what
 * agents report, by the indexer of each domain's broker half that feeds it:
 * the hosts themselves, and each type a domain declares (a host's
 * containers, a cluster's shared objects…). find, describe, resources,
 * metrics and recommendations read it; nothing here asks an agent.
 */
export class FleetIndex extends EventEmitter<IndexEvents> {
  /** One of each domain's indexer, by class. */
  private readonly indexers = new Map<IndexerClass, Indexer>();
  /** Each report kind's indexer, from the kinds its domain declares. */
  private readonly byKind = new Map<string, Indexer>();
  /** Each resource type's indexer, from the types it answers for. */
  private readonly byType = new Map<string, Indexer>();
  /** The roles over shared objects the domains declare, which claims are assessed by. */
  readonly roles = AGENT_ROLES;
  /** The domains' broker halves, for what reads each one's part (broker actions, through their context). */
  readonly domains = BROKER_DOMAINS;
  private readonly warnedAt = new Map<string, number>();
  private pruner: NodeJS.Timeout | undefined;
  /** The hosts that held a role (approved or proven) at the last check. */
  private roleHolders = new Set<string>();

  constructor(
    private readonly registry: AgentRegistry,
    store: BrokerStore,
    private readonly log: Logger,
    private readonly recorder: ReportRecorder,
  ) {
    super();
    const context: IndexContext = {
      registry,
      store,
      evidence: this,
      changed: (what, key, listed = true) => this.emit('changed', what, key, listed),
      notice: (notice) => this.emit('notice', notice),
      refuse: (host, kind, why) => this.drop(host, kind, 'not_role_holder', why),
      rows: (filter) => this.rows(filter),
    };
    for (const { domain, indexer: Class } of BROKER_DOMAINS) {
      if (!Class) continue;
      const indexer = new Class(context);
      this.indexers.set(Class, indexer);
      for (const kind of Object.keys(domain.reports)) this.byKind.set(kind, indexer);
      for (const type of indexer.types ?? []) this.byType.set(type, indexer);
    }
  }

  /** The fleet index's indexer of this class, for what reads that domain's part (from its own folder). */
  indexer<I extends Indexer>(Class: IndexerClass<I>): I {
    const indexer = this.indexers.get(Class as IndexerClass);
    if (!indexer) throw new Error(`${Class.name} is the indexer of no domain in broker/domains/broker-domains.gen.ts: run npm run gen`);
    return indexer as I;
  }

  /**
   * Every resource of the fleet the index knows, as rows with what filters
   * need; with `types`, only resources of those types (a fleet of 2,000 hosts
   * has tens of thousands of container rows, which a search for a host need
   * not build); with `match`, only those it passes.
   */
  rows(filter: RowFilter = {}): Resource[] {
    const hosts = this.registry.list();
    const byId = new Map(hosts.map((host) => [host.id, host]));
    const rows = hostRows(hosts, filter);
    for (const indexer of this.indexers.values()) {
      if (!indexer.rows || (filter.types && !(indexer.types ?? []).some((type) => filter.types?.has(type)))) continue;
      rows.push(...indexer.rows(filter, byId));
    }
    return rows;
  }

  /** The digest of one resource (Cetacean's detail view): its domain's, with what the other domains relate to it. */
  digest(resource: Resource, now = Date.now()): Digest {
    const hosts = this.registry.list();
    const related = [...this.indexers.values()].flatMap((indexer) => indexer.related?.(resource, hosts) ?? []);
    if (resource.row.type === 'host') return hostDigest(resource.host as Host, related);
    const owner = this.byType.get(resource.row.type);
    if (!owner?.digest) throw new Error(`no indexer describes resources of type ${resource.row.type}`);
    const digest = owner.digest(resource, hosts, now);
    return related.length ? { ...digest, related: [...digest.related, ...related] } : digest;
  }

  start(): void {
    this.registry.on('report', (host, kind, payload) => this.onReport(host, kind, payload));
    this.registry.on('revoked', (host) => {
      for (const indexer of this.indexers.values()) indexer.forget?.(host.id);
      this.dropLostRoles();
    });
    // A withdrawn approval, or a Hello that claims another object, ends what the agent contributed as a role holder.
    // Each check reads every host: it runs only for a host that has or states a role, or held one at the last check,
    // since no other host's change can take a role away (run for every state change, it cost a fleet of 2000 coming
    // back after a restart seconds of the broker's CPU).
    this.registry.on('state', (host) => {
      if (host.roles.length > 0 || this.roleHolders.has(host.id) || statedClaims(host.hello?.facts ?? {}, this.roles).length > 0) this.dropLostRoles();
    });
    this.pruner = setInterval(() => this.prune(), 3_600_000);
    this.pruner.unref();
  }

  stop(): void {
    clearInterval(this.pruner);
  }

  /**
   * Takes one report: of a kind a domain declares, checked against that
   * kind's schema, then handed to the domain's indexer (which takes a report
   * about a shared object, such as a cluster, only from an agent
   * holding the role over it). Anything else is dropped and counted, and the
   * agent warned about in the log at most once a minute. Times are the
   * broker's receipt time: an agent's clock never orders reports.
   */
  private onReport(host: Host, kind: string, payload: unknown): void {
    const schema = REPORT_SCHEMAS.get(kind);
    const indexer = this.byKind.get(kind);
    if (!schema || !indexer) {
      // Counted under one label: the kind is the agent's word, and must not grow the metrics without bound.
      this.drop(host, 'other', 'unknown_kind', `is of kind ${JSON.stringify(kind.slice(0, 64))}, which no domain declares`);
      return;
    }
    const receivedAt = Date.now();
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.drop(host, kind, 'malformed', `does not match its schema at ${issue?.path.join('.') || 'the top'}: ${issue?.message ?? 'invalid'}`);
      return;
    }
    try {
      indexer.take?.(host, kind, parsed.data, receivedAt);
    } catch (error) {
      this.log.warn('could not index a report', { agent: host.name, kind, error: (error as Error).message });
    }
  }

  private drop(host: Host, kind: string, reason: DropReason, why: string): void {
    this.recorder.reportDropped(kind, reason);
    const now = Date.now();
    if (now - (this.warnedAt.get(host.id) ?? 0) < WARN_EVERY_MS) return;
    this.warnedAt.set(host.id, now);
    this.log.warn('report dropped', { agent: host.name, agent_id: host.id, kind, reason, detail: why });
  }

  /** Removes what agents contributed as holders of a role they no longer hold (revoked, approval withdrawn, claim changed). */
  private dropLostRoles(): void {
    const claims = assessClaims(this.registry.list(), this);
    this.roleHolders = new Set([...claims].filter(([, held]) => held.some((claim) => claim.status !== 'pending')).map(([hostId]) => hostId));
    for (const indexer of this.indexers.values()) indexer.dropLostRoles?.(claims);
  }

  private prune(): void {
    const now = Date.now();
    for (const indexer of this.indexers.values()) indexer.prune?.(now);
  }
}

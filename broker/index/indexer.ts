import type { ResourceType } from '../../shared/domains/resource-types.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { Claim, ClaimEvidence } from '../agents/claims.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { Notice } from './notice.ts';
import type { Digest, Related, Resource, RowFilter } from './resource.ts';

/** What the fleet index gives each domain's indexer. */
export interface IndexContext {
  readonly registry: AgentRegistry;
  readonly store: BrokerStore;
  /** What the broker trusts about shared objects, for role checks. */
  readonly evidence: ClaimEvidence;
  /**
   * Tells subscribers something changed (`containers`, `guests`, … and a host
   * id, or the domain's name and one of its groups). `listed: false` says the
   * things listed are the same ones, under the same names (a state changed,
   * nothing came, went or was renamed): sessions then re-read what they
   * subscribed to without listing every resource again.
   */
  changed(what: string, key: string, listed?: boolean): void;
  /** Tells whoever sends notifications of something a person should hear of. */
  notice(notice: Notice): void;
  /** Drops a report whose sender holds no role over the object it is about, counted and logged. */
  refuse(host: Host, kind: string, why: string): void;
  /** The index's resources of any domain, for a domain whose things are another's seen anew (a sandbox is a container). */
  rows(filter: RowFilter): Resource[];
}

/**
 * One domain's part of the fleet index, the `indexer` of its broker half
 * (`broker/domains/<domain>/`), which the fleet index makes once: it takes
 * the reports its domain declares, already checked against their schemas,
 * keeps what find, describe and the routes read, and answers for the
 * resource types its domain declares.
 */
export interface Indexer {
  /** The resource types whose rows and digests it answers for (its domain's parts declare them). */
  readonly types?: readonly ResourceType[];
  /** Takes one report of a kind its domain declares; times are the broker's receipt time. */
  take?(host: Host, kind: string, payload: unknown, receivedAt: number): void;
  /** The agent was revoked: forget what it reported. */
  forget?(hostId: string): void;
  /** Removes what agents contributed as holders of roles they no longer hold. */
  dropLostRoles?(claims: ReadonlyMap<string, Claim[]>): void;
  /** Drops what is too old to keep (hourly). */
  prune?(now: number): void;
  /** Its resources the filter asks for; `hosts` are the registry's agents by id. */
  rows?(filter: RowFilter, hosts: ReadonlyMap<string, Host>): Resource[];
  /** The digest of one of its resources (what describe answers). */
  digest?(resource: Resource, hosts: readonly Host[], now: number): Digest;
  /** What it relates to a resource of another type (a host's containers, a container's service). */
  related?(resource: Resource, hosts: readonly Host[]): Related[];
}

/** An indexer's class: the fleet index makes one with its context. */
export type IndexerClass<I extends Indexer = Indexer> = new (context: IndexContext) => I;

import type { Domain } from '../../shared/domains/domain.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { Claim, ClaimEvidence } from '../agents/claims.ts';
import type { BrokerStore } from '../store/broker-store.ts';

/** What the fleet index gives each domain's indexer. */
export interface IndexContext {
  readonly registry: AgentRegistry;
  readonly store: BrokerStore;
  /** What the broker trusts about shared objects, for role checks. */
  readonly evidence: ClaimEvidence;
  /** Tells subscribers something changed (`containers`, `swarm`, `guests` and a key). */
  changed(what: string, key: string): void;
  /** Drops a report whose sender holds no role over the object it is about, counted and logged. */
  refuse(host: Host, kind: string, why: string): void;
}

/**
 * One domain's part of the fleet index, in `broker/index/<name>-indexer.ts`
 * exporting class `<Name>Indexer` (`npm run gen` lists each in
 * `indexers.gen.ts`, and the fleet index makes one of each): it takes the reports its domain
 * declares, already checked against their schemas, and keeps what find,
 * describe and the routes read.
 */
export interface Indexer {
  /** The domain whose report kinds it takes. */
  readonly domain: Domain;
  /** Takes one report; times are the broker's receipt time. */
  take(host: Host, kind: string, payload: unknown, receivedAt: number): void;
  /** The agent was revoked: forget what it reported. */
  forget(hostId: string): void;
  /** Removes what agents contributed as holders of roles they no longer hold. */
  dropLostRoles?(claims: ReadonlyMap<string, Claim[]>): void;
  /** Drops what is too old to keep (hourly). */
  prune?(now: number): void;
}

/** An indexer's class: the fleet index makes one with its context. */
export type IndexerClass<I extends Indexer = Indexer> = new (context: IndexContext) => I;

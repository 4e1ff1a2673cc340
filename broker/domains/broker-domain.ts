import type { z } from 'zod';
import type { Action } from '../../shared/catalog/action.ts';
import type { Domain } from '../../shared/domains/domain.ts';
import type { Host } from '../agents/agent-registry.ts';
import type { AgentRoleDeclaration } from '../agents/claims.ts';
import type { Identity } from '../auth/identities.ts';
import type { BrokerActionContext, BrokerActionHandler } from '../calls/broker-action.ts';
import type { RouteCall, RouteDeps, RunResult } from '../calls/call-route.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import type { IndexerClass } from '../index/indexer.ts';
import type { BrokerServicePlugin } from '../services/broker-service.ts';
import type { DomainPrompt } from './domain-prompt.ts';
import type { DomainResource } from './domain-resource.ts';

/**
 * The broker half of one domain, declared in `broker/domains/<domain>/<domain>-broker.ts`
 * as `<domain>Broker` (`npm run gen` lists every folder in `broker-domains.gen.ts`).
 * Generic code (the fleet index, routes, grants, claims, MCP resources and
 * prompts, the console) loops over these and never names what one declares.
 */
export interface BrokerDomain {
  /** The domain's shared declaration (actions, reports, flags). */
  readonly domain: Domain;
  /** Its part of the fleet index: takes its reports and answers for its resource types. */
  readonly indexer?: IndexerClass;
  /** The handlers of its actions the broker answers itself (`runsOn: 'broker'`). */
  readonly actions?: readonly BrokerActionHandler[];
  /** The services those handlers use, configured by the domain's broker flags. */
  readonly services?: readonly BrokerServicePlugin[];
  /** How its actions whose `runsOn` is the domain's name are run: one agent answering for a shared object. */
  readonly route?: DomainRoute;
  /** The shared objects its resources belong to (a cluster), which its URIs name by `{cluster}`. */
  readonly groups?: ResourceGroups;
  /** The roles an agent may hold over those objects: what it claims, and what proves a claim. */
  readonly roles?: readonly AgentRoleDeclaration[];
  /** The `fleet://` resources it offers MCP clients, beside its actions. */
  readonly resources?: readonly DomainResource[];
  /** The guided investigations it offers, walking its tools. */
  readonly prompts?: readonly DomainPrompt[];
  /** The MCP Apps widgets it declares for its actions' answers (`ui://fleetmesh/<name>`); web/src/widgets/ builds each. */
  readonly widgets?: readonly WidgetDeclaration[];
  /** What the MCP server's instructions say of its tools, in one sentence for the model. */
  readonly instructions?: string;
  /** What it finds to fix among what the caller may read (get_recommendations). */
  findings?(context: BrokerActionContext, now: number): Promise<Finding[]>;
  /** Named groups of hosts its shared objects make (a cluster's nodes), for metrics of a cluster. */
  hostGroups?(context: BrokerActionContext): HostGroup[];
  /** Other names it knows a host by (its node id in a cluster), for metrics of a node. */
  hostAliases?(host: Host): string[];
}

export type FindingSeverity = 'info' | 'warning' | 'critical';

/** One thing worth fixing, with why and the tool that fixes it. */
export interface Finding {
  severity: FindingSeverity;
  category: string;
  target: { type: string; id: string; name: string; cluster?: string };
  rationale: string;
  fix?: { tool: string; section?: string };
}

/** The hosts of one shared object (the agents on a cluster's nodes), by the names its domain's tools take. */
export interface HostGroup {
  id: string;
  name: string;
  /** The ids of its member agents. */
  hostIds: readonly string[];
}

/** One MCP Apps widget: its name (what actions' `widget` names) and the title its resource is listed under. */
export interface WidgetDeclaration {
  readonly name: string;
  readonly title: string;
}

/**
 * A route of the domain's own, beside the generic ones (fan-out to hosts, the
 * broker's own handlers): which agent answers for a shared object, and what an
 * identity may do with it there.
 */
export interface DomainRoute {
  /** Runs one call: chooses the agent, checks grants and confirmation, audits (`call.begin`), sends, answers. */
  run(call: RouteCall, deps: RouteDeps): Promise<RunResult>;
  /**
   * Authorises again, on the broker of a cluster that holds the agent, a call
   * another broker relayed to it for this action; throws the FleetError the
   * caller would have got.
   */
  checkRelayed(identity: Identity, action: Action, params: Record<string, unknown>, host: Host, index: FleetIndex): void;
  /** What the route adds to every answer (the object that answered, through which agent), for the advertised output schema. */
  readonly answerShape?: z.ZodRawShape;
}

/** One shared object as URIs name it: by its name where that is unique in the fleet, else by its id. */
export interface GroupKey {
  id: string;
  name: string;
  key: string;
}

/** The shared objects a domain's resources belong to (`Resource.group`). */
export interface ResourceGroups {
  /** The ones an identity sees anything of, keyed as its URIs name them. */
  visible(identity: Identity, index: FleetIndex, hosts: readonly Host[]): GroupKey[];
}

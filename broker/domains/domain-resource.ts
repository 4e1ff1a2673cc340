import type { Action } from '../../shared/catalog/action.ts';
import type { ResourceType } from '../../shared/domains/resource-types.ts';
import type { Resource } from '../index/resource.ts';
import type { FleetView } from '../mcp/resources/fleet-view.ts';

/** What a read of a domain's resource names: one of its groups, or one thing of a type the fleet index holds. */
export interface ResourceTarget {
  /** The group's id (a cluster's), for a thing of a group or a resource of the whole group. */
  group?: string;
  /** The thing's id and name in the index (absent for a resource of a whole group). */
  id?: string;
  name?: string;
}

/** A document a domain builds from the index for one of its things (a service as a Compose file). */
export interface ResourceDocument {
  readonly mimeType: string;
  /** The document of a thing the identity may see, read from its view of the fleet. */
  read(resource: Resource, view: FleetView): string;
}

/**
 * One `fleet://` resource template a domain's broker half offers. Variables:
 * `{cluster}` one of the domain's groups (as its tools take it) or the cluster
 * (else the reporting host) of a thing, `{host}` the agent a thing lives on,
 * `{name}` the thing (by `key`); a template without variables is one
 * resource. Grants, completion and the list of concrete resources follow
 * `type`, the fleet index's type it shows.
 */
export interface DomainResource {
  /** The URI template after `fleet://`. */
  readonly template: string;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** The index type it shows; absent for a resource of a whole group. */
  readonly type?: ResourceType;
  /** Which of the thing's names its URI carries: its name, or its id where names repeat (tasks, guests). */
  readonly key?: 'name' | 'id';
  /**
   * What a read answers: the index's digest (what describe answers), a
   * document the domain builds from the index, or an action run as a tool call
   * would run it (levels, grants, audit) with these arguments.
   */
  readonly content: 'digest' | ResourceDocument | { readonly action: Action; args(target: ResourceTarget): Record<string, unknown> };
}

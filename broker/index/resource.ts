import type { z } from 'zod';
import type { digestShape, rowShape } from '../../shared/domains/index-shapes.ts';
import type { GrantRef } from '../../shared/domains/resource-types.ts';
import type { Host } from '../agents/agent-registry.ts';
import type { Identity } from '../auth/identities.ts';
import { mayRead } from '../auth/visibility.ts';

/** One entry in a list, as find returns it. */
export type Row = z.infer<typeof rowShape>;
/** The detail view of one resource, as describe returns it. */
export type Digest = z.infer<typeof digestShape>;
/** One thing a digest relates to its resource. */
export type Related = Digest['related'][number];

/** A resource as find and describe see it: its row, what it is made of, and what grants and filters need. */
export interface Resource {
  row: Row;
  record: unknown;
  labels: Record<string, string>;
  image?: string;
  /** The node or host it runs on, for find's node filter. */
  node?: string;
  /** The agent it lives on, or that reported it. */
  host?: Host;
  /** The shared object it belongs to (a cluster's id), for the URIs and reads of its domain. */
  group?: string;
  /** What holds it, whose grants show it too (a task's service, a stack's services). */
  parents?: readonly GrantRef[];
}

/**
 * Which resources a caller wants, by what names them: id (a container's short
 * id), name, host, and the record's own id (a container's full id), with the
 * record itself for a domain that builds its rows from another's. Asked before
 * a row is built, so a lookup of a few things in a fleet of 2,000 hosts builds
 * a few rows, not tens of thousands; a superset is fine (the caller picks among
 * what passes).
 */
export type ResourceMatch = (id: string, name: string, host: string | undefined, recordId: string | undefined, record?: unknown) => boolean;

/** Which resources to build: only those of these types (all when absent), and of those only what `match` passes. */
export interface RowFilter {
  readonly types?: ReadonlySet<string> | undefined;
  readonly match?: ResourceMatch | undefined;
}

/** Whether a filter asks for a type at all. */
export const wantsType = (filter: RowFilter, type: string): boolean => filter.types === undefined || filter.types.has(type);

/** Whether a resource built whole passes a filter (for a domain whose rows are few: built, then kept). */
export function passes(filter: RowFilter, resource: Resource): boolean {
  const { row, record } = resource;
  if (!wantsType(filter, row.type)) return false;
  return !filter.match || filter.match(row.id, row.name, row.host, (record as { id?: unknown }).id as string | undefined, record);
}

/** Whether an identity may see a resource: `mayRead`, the one rule every read answer filters by. */
export function visible(identity: Identity, resource: Resource): boolean {
  const { row } = resource;
  return mayRead(identity, {
    type: row.type,
    name: row.name,
    ...(row.host !== undefined ? { host: row.host } : {}),
    ...(resource.parents ? { parents: resource.parents } : {}),
  });
}

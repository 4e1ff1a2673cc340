import type { GrantRef, ResourceTypeDeclaration } from './domain-parts.ts';
import { PART_FOLDERS } from './parts.gen.ts';

export type { GrantRef } from './domain-parts.ts';

/** The fleet's own type: each agent's host, named by the agent's name. A grant on it covers what lives there. */
const HOST_TYPE = { host: { scope: 'fleet', rank: 0 } } as const satisfies Record<string, ResourceTypeDeclaration>;

type TypesOf<P> = P extends { resourceTypes: infer T } ? keyof T & string : never;

/** Every type of the fleet index: the host, and each type a domain declares in its parts. */
export type ResourceType = keyof typeof HOST_TYPE | TypesOf<(typeof PART_FOLDERS)[number]>;

const DECLARED = new Map<string, ResourceTypeDeclaration>(
  [HOST_TYPE, ...PART_FOLDERS.map((parts) => ('resourceTypes' in parts ? parts.resourceTypes : {}))].flatMap((types) => Object.entries(types)),
);

/** Every type, in the order find lists them (by rank). */
export const RESOURCE_TYPES = [...DECLARED].sort(([, a], [, b]) => a.rank - b.rank).map(([type]) => type) as [ResourceType, ...ResourceType[]];

/** The types whose things are named `HOST/NAME`. */
export const HOST_SCOPED_TYPES: readonly ResourceType[] = RESOURCE_TYPES.filter((type) => DECLARED.get(type)?.scope === 'host');

/** What a domain declares of a type; undefined for a type no domain declares. */
export function resourceTypeOf(type: string): ResourceTypeDeclaration | undefined {
  return DECLARED.get(type);
}

/** The grant kinds that can show a thing of a type: its own, its host's for host types, and what it declares. */
export function grantKindsShowing(type: string): readonly string[] {
  const declared = DECLARED.get(type);
  return [type, ...(declared?.scope === 'host' ? ['host'] : []), ...(declared?.shownBy ?? [])];
}

/** The things that show a thing of a type from its name alone (a task's service). */
export function parentsByName(type: string, name: string): readonly GrantRef[] {
  return DECLARED.get(type)?.parentsOf?.(name) ?? [];
}

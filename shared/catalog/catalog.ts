import type { Domain } from '../domains/domain.ts';
import { DOMAINS } from '../domains/domains.ts';
import type { Action } from './action.ts';

/** Every action fleetmesh has, in the order docs list them: each domain's, in the order of the domain list. */
export const CATALOG: readonly Action[] = DOMAINS.flatMap((domain: Domain) => domain.actions);

/** Domains in catalog order. */
export function domains(): string[] {
  return DOMAINS.map((domain: Domain) => domain.name);
}

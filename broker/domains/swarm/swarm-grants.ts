import type { Action } from '../../../shared/catalog/action.ts';
import type { VisibleResources } from '../../../shared/catalog/partial-view.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Identity } from '../../auth/identities.ts';
import { mayRead } from '../../auth/visibility.ts';
import type { FleetIndex } from '../../index/fleet-index.ts';
import { visible } from '../../index/resource.ts';
import { SwarmIndexer } from './swarm-indexer.ts';

/**
 * What of one swarm an identity may read, decided resource by resource with
 * `visible()`, the rule find and describe apply: a swarm read answers exactly
 * what describe would show of the same resources, and nothing of the rest.
 */
export interface SwarmReadScope extends VisibleResources {
  /** Every resource of the swarm is visible: answers pass unchanged. */
  whole: boolean;
  /** Nothing of the swarm is visible: the swarm itself is hidden. */
  none: boolean;
}

export function swarmReadScope(identity: Identity, index: FleetIndex, clusterId: string): SwarmReadScope {
  const resources = index.indexer(SwarmIndexer).resourcesOf(clusterId);
  const seen = new Set<string>();
  const counts = new Map<string, number>();
  let hidden = 0;
  for (const resource of resources) {
    if (!visible(identity, resource)) {
      hidden += 1;
      continue;
    }
    counts.set(resource.row.type, (counts.get(resource.row.type) ?? 0) + 1);
    seen.add(`${resource.row.type}:${resource.row.id}`);
    seen.add(`${resource.row.type}:${resource.row.name}`);
  }
  // Without an indexed snapshot nothing can be checked: only an identity that may read every service and node sees the swarm.
  const unchecked = resources.length === 0 && !(mayRead(identity, { type: 'service', name: '\u0000' }) && mayRead(identity, { type: 'node', name: '\u0000' }));
  return {
    whole: !unchecked && hidden === 0,
    none: unchecked || (resources.length > 0 && seen.size === 0),
    sees: (type, ref) => seen.has(`${type}:${ref}`),
    count: (type) => counts.get(type) ?? 0,
  };
}

/**
 * Refuses a read of a swarm the identity sees none of, or whose parameters name
 * a resource it may not see, as if it did not exist (the action's partial view).
 */
export function checkSwarmReadParams(action: Action, params: Record<string, unknown>, scope: SwarmReadScope, clusterName: string): void {
  if (scope.whole) return;
  if (scope.none) throw new FleetError('not_found', 'no swarm is visible to this identity', { hint: 'find lists what you may see.' });
  action.partialView?.check?.(params, scope, clusterName);
}

/** A swarm read's answer without anything about resources the identity may not see (the action's partial view). */
export function filterSwarmAnswer(action: Action, answer: Record<string, unknown>, scope: SwarmReadScope): Record<string, unknown> {
  if (scope.whole || !action.partialView) return answer;
  return action.partialView.filter(answer, scope);
}

import { parentsByName } from '../../shared/domains/resource-types.ts';
import type { Identity } from '../auth/identities.ts';
import { mayRead } from '../auth/visibility.ts';

interface Related {
  type: string;
  name: string;
  host?: string;
}

/**
 * A digest's `related` as the identity may see it, by `mayRead` like every
 * read: a related thing it may not read is left out, and the host of one
 * shown through what holds it is not named to an identity that may not see
 * that host (a service grant shows the service's tasks, not which agents run
 * them).
 */
export function visibleRelated<T extends { related: Related[] }>(identity: Identity, digest: T): T {
  const related = digest.related
    .filter((r) => mayRead(identity, { type: r.type, name: r.name, ...(r.host !== undefined ? { host: r.host } : {}), parents: parentsByName(r.type, r.name) }))
    .map((r) => {
      if (r.host === undefined || parentsByName(r.type, r.name).length === 0 || mayRead(identity, { type: 'host', name: r.host })) return r;
      const { host: _hidden, ...rest } = r;
      return rest as typeof r;
    });
  return { ...digest, related };
}

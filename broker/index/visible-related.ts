import type { Identity } from '../auth/identities.ts';
import { mayRead } from '../auth/visibility.ts';

interface Related {
  type: string;
  name: string;
  host?: string;
}

/** The service a task name (`service.slot` or `service.nodeid`) belongs to. */
const serviceOfTask = (name: string) => (name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : name);

/**
 * A digest's `related` as the identity may see it, by `mayRead` like every
 * read: a related thing it may not read is left out, and a host it may not see
 * is not named (a service grant shows the service's tasks, not which agents
 * run them).
 */
export function visibleRelated<T extends { related: Related[] }>(identity: Identity, digest: T): T {
  const related = digest.related
    .filter((r) =>
      mayRead(identity, {
        type: r.type,
        name: r.name,
        ...(r.host !== undefined ? { host: r.host } : {}),
        ...(r.type === 'task' ? { service: serviceOfTask(r.name) } : {}),
      }),
    )
    .map((r) => {
      if (r.host === undefined || mayRead(identity, { type: 'host', name: r.host }) || r.type !== 'task') return r;
      const { host: _hidden, ...rest } = r;
      return rest as typeof r;
    });
  return { ...digest, related };
}

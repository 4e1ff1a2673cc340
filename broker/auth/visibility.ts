import type { Identity } from './identities.ts';

/**
 * A thing in the fleet as grants see it: its kind, its name, the host it lives
 * on (containers, volumes, sandboxes, guests reported by a host), the service
 * a task belongs to, the services a stack holds.
 */
interface VisibleRef {
  type: string;
  name: string;
  host?: string;
  service?: string;
  stackServices?: readonly string[];
}

/**
 * Whether an identity may read one thing: the one rule every read answer
 * (tools, the fleet index, metrics, recommendations, resources and their
 * notifications) filters by. A host grant covers what lives on the host, a
 * service grant the service's tasks and the stacks that hold it.
 */
export function mayRead(identity: Identity, ref: VisibleRef): boolean {
  const { grants } = identity;
  switch (ref.type) {
    case 'host':
      return grants.host(ref.name);
    case 'container':
    case 'volume':
    case 'sandbox':
      return ref.host !== undefined && grants.resource(ref.type, `${ref.host}/${ref.name}`);
    case 'task':
      return grants.resource('task', ref.name) || (ref.service !== undefined && grants.resource('service', ref.service));
    case 'guest':
      // Any agent of the PVE cluster could have reported it; a grant on the reporting host covers what its API shows.
      return (ref.host !== undefined && grants.host(ref.host)) || grants.resource('guest', ref.name);
    case 'stack':
      return grants.resource('stack', ref.name) || (ref.stackServices ?? []).some((service) => grants.resource('service', service));
    default:
      return grants.resource(ref.type, ref.name);
  }
}

/** The grant kinds that can show a thing of each type, as `mayRead` decides it. */
const KINDS_THAT_SHOW: Record<string, readonly string[]> = {
  host: ['host'],
  container: ['host', 'container'],
  volume: ['host', 'volume'],
  sandbox: ['host', 'sandbox'],
  task: ['task', 'service'],
  guest: ['host', 'guest'],
  stack: ['stack', 'service'],
};

/**
 * Whether an identity may read anything at all of a type, by the kinds of its
 * grants and the same rules as `mayRead`: a prompt that reads services is
 * offered only to an identity that may see some.
 */
export function mayReadSome(identity: Identity, type: string): boolean {
  const kinds = KINDS_THAT_SHOW[type] ?? [type];
  return identity.grants.texts.some((text) => {
    const kind = text.slice(0, text.indexOf(':'));
    return kind === '*' || kinds.includes(kind);
  });
}

import { type GrantRef, grantKindsShowing, resourceTypeOf } from '../../shared/domains/resource-types.ts';
import type { Identity } from './identities.ts';

/**
 * A thing in the fleet as grants see it: its type, its name, the host it lives
 * on or was reported by, and the things that hold it (a task's service, the
 * services a stack holds), whose grants show it too.
 */
export interface VisibleRef {
  type: string;
  name: string;
  host?: string;
  parents?: readonly GrantRef[];
}

/**
 * Whether an identity may read one thing: the one rule every read answer
 * (tools, the fleet index, metrics, recommendations, resources and their
 * notifications) filters by. A host grant covers what lives on the host, and a
 * grant on a thing that holds another shows that one too; which types live on
 * a host, and which are shown by their reporting host, their types declare.
 */
export function mayRead(identity: Identity, ref: VisibleRef): boolean {
  const { grants } = identity;
  const declared = resourceTypeOf(ref.type);
  if (declared?.scope === 'host') return ref.host !== undefined && grants.resource(ref.type, `${ref.host}/${ref.name}`);
  if (grants.resource(ref.type, ref.name)) return true;
  if (ref.host !== undefined && declared?.shownBy?.includes('host') && grants.host(ref.host)) return true;
  return (ref.parents ?? []).some((parent) => mayRead(identity, parent));
}

/**
 * Whether an identity may read anything at all of a type, by the kinds of its
 * grants and the same rules as `mayRead`: a prompt that reads services is
 * offered only to an identity that may see some.
 */
export function mayReadSome(identity: Identity, type: string): boolean {
  const kinds = grantKindsShowing(type);
  return identity.grants.texts.some((text) => {
    const kind = text.slice(0, text.indexOf(':'));
    return kind === '*' || kinds.includes(kind);
  });
}

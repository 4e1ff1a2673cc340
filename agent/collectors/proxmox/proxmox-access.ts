import type { MembershipCache } from './cluster-membership.ts';
import type { CallBounds, PveApi } from './pve-api.ts';

/** What the tool handlers get from the collector: the API bound to the right token for one call, and the cluster view. */
export interface ProxmoxAccess {
  readonly endpoint: string;
  /** The API with the read token. */
  reader(call: CallBounds): PveApi;
  /** The API with the action token; a `configuration` failure when the agent has none (the read token is never used for changes). */
  actor(call: CallBounds): PveApi;
  readonly membership: MembershipCache;
  /** A guest's state was changed: refresh what the broker's index knows of the guests. */
  guestsChanged(): void;
}

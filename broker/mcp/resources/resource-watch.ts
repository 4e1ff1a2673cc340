import { createHash } from 'node:crypto';
import { BROKER_DOMAINS } from '../../domains/broker-domains.ts';
import type { ResourceContext } from './fleet-resources.ts';
import { everyResource, isAgentAnswered, readAny } from './register-resources.ts';
import { ResourceSubscriptions } from './resource-subscriptions.ts';

/** The domains with groups (a cluster's shared objects), by name: every session looks each change up here. */
const GROUPED = new Map(BROKER_DOMAINS.filter((broker) => broker.groups).map((broker) => [broker.domain.name, broker]));

/** How a session's clients hear of changes: a 2025-era session's server, or a 2026-07-28 endpoint's listen streams. */
export interface ResourceNotices {
  updated(uri: string): Promise<void>;
  listChanged(): Promise<void>;
}

/**
 * What one session's identity is subscribed to, for the session's life (a
 * 2026-07-28 endpoint makes a server per request, so this lives on the
 * session, not on a server). A change of the fleet the identity may see
 * re-reads the subscriptions as the identity and tells only what changed.
 */
export class ResourceWatch {
  private readonly subscriptions: ResourceSubscriptions;
  /** Per group (a cluster), what the identity saw of it when last told: agent-answered resources are told only when that changed. */
  private readonly groupSeen = new Map<string, string>();

  constructor(
    private readonly contextOf: (signal: AbortSignal) => ResourceContext,
    /** The identity and the registry: enough to judge a change about one host, which needs no whole context (hundreds a second at 10,000 hosts, for every session). */
    private readonly watcher: Pick<ResourceContext, 'identity' | 'registry'>,
    notices: ResourceNotices,
    /** Told every subscribed URI after a subscribe or unsubscribe. */
    private readonly onSubscriptions: (uris: string[]) => void = () => {},
  ) {
    const now = () => this.now();
    this.subscriptions = new ResourceSubscriptions(
      async (uri) => {
        try {
          return (await readAny(uri, now())).text;
        } catch {
          return undefined;
        }
      },
      () => everyResource(now()).map((r) => r.uri),
      notices,
      undefined,
      () => {
        const context = now();
        const { identity } = context;
        return JSON.stringify([
          context.level,
          identity.grants.texts,
          identity.tools?.globs ?? null,
          context.surface.name,
          context.visibleActions.map((action) => action.id),
        ]);
      },
    );
  }

  private now(): ResourceContext {
    return this.contextOf(new AbortController().signal);
  }

  /** Subscribes to a resource; one the identity may not read is refused exactly like one that does not exist. */
  async subscribe(uri: string, signal: AbortSignal): Promise<void> {
    const { text } = await readAny(uri, this.contextOf(signal));
    this.subscriptions.subscribe(uri, isAgentAnswered(uri), text);
    this.onSubscriptions(this.subscriptions.uris());
  }

  unsubscribe(uri: string): void {
    this.subscriptions.unsubscribe(uri);
    this.onSubscriptions(this.subscriptions.uris());
  }

  /** Forgets every subscription (a 2026-07-28 endpoint whose listen streams all ended). */
  clear(): void {
    this.subscriptions.clear();
  }

  /**
   * Something in the fleet changed (the index's `changed`, or a host's state):
   * only what the identity may see counts. A change of a domain's group (a
   * cluster) re-tells the agent-answered resources under that group's URIs
   * only when what the identity sees of the group changed. `listed: false`
   * says the things listed stayed the same (the list is not made again).
   */
  fleetChanged(what: string, key: string, listed = true): void {
    const grouped = GROUPED.get(what);
    if (grouped) {
      const view = this.now().view();
      const group = view.groupsOf(what).find((g) => g.id === key);
      if (!group) return;
      const seen = createHash('sha256');
      for (const resource of view.resources) if (resource.group === key) seen.update(JSON.stringify(resource.record));
      const digest = seen.digest('base64');
      if (this.groupSeen.get(key) === digest) {
        this.subscriptions.changed(undefined, listed);
        return;
      }
      this.groupSeen.set(key, digest);
      const prefixes = (grouped.resources ?? [])
        .filter((declaration) => declaration.template.includes('{cluster}'))
        .map((declaration) => `fleet://${declaration.template.slice(0, declaration.template.indexOf('{cluster}'))}${encodeURIComponent(group.key)}`);
      this.subscriptions.changed((uri) => prefixes.some((prefix) => uri === prefix || uri.startsWith(`${prefix}/`)), listed);
      return;
    }
    // Everything else is about one host (`host`: its state, by name; the index's kinds: by id): only a host the identity reaches counts.
    const { identity, registry } = this.watcher;
    const name = what === 'host' ? key : registry.get(key)?.name;
    if (name !== undefined && identity.grants.reachesHost(name)) this.subscriptions.changed(undefined, listed);
  }
}

import { z } from 'zod';
import type { Action } from '../../shared/catalog/action.ts';
import { envelopeSchema } from '../../shared/catalog/results.ts';
import { type ErrorInfo, errorInfo } from '../../shared/errors/fleet-error.ts';
import type { Identity } from '../auth/identities.ts';
import { mayRead } from '../auth/visibility.ts';
import type { HostOutcome } from './fan-out.ts';

/** A fleet answer of any action (DESIGN §5), as the catalog's result schema declares it. */
const fleetEnvelopeSchema = envelopeSchema(z.object({}).loose());

export type FleetEnvelope = z.infer<typeof fleetEnvelopeSchema>;
/** One host's answer as results carry it: the action's fields beside the node fields. */
export type HostNode = FleetEnvelope['hosts'][number];

function unavailable(host: string, error: ErrorInfo, at: number): HostNode {
  return { host, availability: 'unavailable', sampled_at_unix_ms: at, failed_collectors: [], errors: [{ ...error, host }] };
}

/** How a host's answer is read: by whom, and whether the call named one resource (whose answer is all about it). */
export interface NodeReader {
  identity: Identity;
  resourceNamed?: boolean;
}

/**
 * A host's answer as its reader may see it, by `mayRead` like every read: the
 * list items it may not see are dropped as if they did not exist, and the
 * lists' counts count what is left. A reader that may see only some of the
 * host's resources (a grant on some containers) sees those and nothing of the
 * host itself: every other field is left out, and the error returned says so.
 */
function applyGrants(payload: Record<string, unknown>, action: Action, host: string, reader: NodeReader): ErrorInfo | undefined {
  const scope = action.resources;
  if (!scope?.lists) return undefined;
  const { identity } = reader;
  for (const list of scope.lists) {
    const items = payload[list.field];
    if (!Array.isArray(items)) continue;
    const visible = items.filter((item) => {
      const name = (item as Record<string, unknown>)[list.name];
      return typeof name === 'string' && mayRead(identity, { type: scope.kind, name, host });
    });
    payload[list.field] = visible;
    if (list.count !== undefined && typeof payload[list.count] === 'number') payload[list.count] = visible.length;
  }
  if (reader.resourceNamed || mayRead(identity, { type: 'host', name: host })) return undefined;
  // The node's own fields (when the answer was sampled) are set for every reader below.
  const shown = new Set(['sampled_at_unix_ms', ...scope.lists.flatMap((list) => [list.field, list.count ?? list.field]), ...(scope.callFields ?? [])]);
  const left = Object.keys(payload).filter((field) => !shown.has(field));
  for (const field of left) delete payload[field];
  if (left.length === 0) return undefined;
  return errorInfo(
    'not_found',
    `${action.tool} leaves out ${left.join(', ')}: they describe the whole of ${host}, and this identity may see only some of its ${scope.kind}s`,
    'Ask for a host grant to see them.',
  );
}

/** Turns one agent's outcome into its node, checking the answer against the action's output schema. */
export function toNode(outcome: HostOutcome, action: Action, reader: NodeReader, now = Date.now()): HostNode {
  const host = outcome.host.name;
  if (!outcome.outcome.ok) return unavailable(host, outcome.outcome.error, now);
  const errors: ErrorInfo[] = outcome.outcome.errors.map((e) => ({ ...e, host }));
  const failedCollectors = outcome.outcome.failedCollectors;
  const absent = outcome.outcome.absentCollectors ?? [];
  const absentField = absent.length ? { absent_collectors: absent } : {};
  const payload = outcome.outcome.payload;
  if (payload === null || payload === undefined) {
    const first = errors[0] ?? errorInfo('internal', 'the agent answered with nothing', 'Check the agent log on that host.');
    return {
      host,
      availability: 'unavailable',
      sampled_at_unix_ms: now,
      failed_collectors: failedCollectors,
      errors: errors.length ? errors : [{ ...first, host }],
      ...absentField,
    };
  }
  const parsed = action.output.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return unavailable(
      host,
      errorInfo(
        'internal',
        `the answer of agent ${host} (fleetmesh ${outcome.host.version || '?'}) does not match ${action.tool}'s result schema at ${issue?.path.join('.') || 'the top'}: ${issue?.message ?? 'invalid'}`,
        "Upgrade the agent on that host to the broker's version.",
      ),
      now,
    );
  }
  const fields = { ...(parsed.data as Record<string, unknown>) };
  const leftOut = applyGrants(fields, action, host, reader);
  if (leftOut) errors.push({ ...leftOut, host });
  const reported = (payload as Record<string, unknown>).sampled_at_unix_ms;
  const sampled = typeof reported === 'number' ? reported : now;
  return {
    ...fields,
    host,
    availability: errors.length || failedCollectors.length ? 'partial' : 'available',
    sampled_at_unix_ms: sampled,
    failed_collectors: failedCollectors,
    errors,
    ...absentField,
  };
}

/**
 * The fleet answer of the nodes. Absent collectors are said once for the
 * fleet, not on each host: those the hosts reported, and `skipped`, the hosts
 * a call for every host left out because the action's collector is absent there.
 */
export function toEnvelope(nodes: HostNode[], skipped: { collector: string; hosts: string[] }[] = []): FleetEnvelope {
  const absent = new Map<string, Set<string>>();
  const note = (collector: string, host: string) => absent.set(collector, (absent.get(collector) ?? new Set()).add(host));
  for (const entry of skipped) for (const host of entry.hosts) note(entry.collector, host);
  const hosts = [...nodes]
    .sort((a, b) => a.host.localeCompare(b.host))
    .map(({ absent_collectors, ...node }) => {
      for (const collector of absent_collectors ?? []) note(collector, node.host);
      return node;
    });
  const listed = [...absent].sort(([a], [b]) => a.localeCompare(b)).map(([collector, on]) => ({ collector, hosts: [...on].sort() }));
  return {
    schema_version: 1,
    targeted: hosts.length,
    responded: hosts.filter((node) => node.availability !== 'unavailable').length,
    hosts,
    errors: hosts.flatMap((node) => node.errors),
    ...(listed.length ? { absent_collectors: listed } : {}),
  };
}

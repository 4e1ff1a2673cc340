import { z } from 'zod';
import type { Action } from '../../shared/catalog/action.ts';
import { envelopeSchema } from '../../shared/catalog/results.ts';
import { type ErrorInfo, errorInfo } from '../../shared/errors/fleet-error.ts';
import type { Identity } from '../auth/identities.ts';
import type { HostOutcome } from './fan-out.ts';

/** A fleet answer of any action (DESIGN §5), as the catalog's result schema declares it. */
const fleetEnvelopeSchema = envelopeSchema(z.object({}).loose());

export type FleetEnvelope = z.infer<typeof fleetEnvelopeSchema>;
/** One host's answer as results carry it: the action's fields beside the node fields. */
export type HostNode = FleetEnvelope['hosts'][number];

function unavailable(host: string, error: ErrorInfo, at: number): HostNode {
  return { host, availability: 'unavailable', sampled_at_unix_ms: at, failed_collectors: [], errors: [{ ...error, host }] };
}

/** Drops the items of a host's answer the identity may not see, as if they did not exist. */
function applyGrants(payload: Record<string, unknown>, action: Action, host: string, identity: Identity): void {
  const scope = action.resources;
  if (!scope?.lists) return;
  for (const list of scope.lists) {
    const items = payload[list.field];
    if (!Array.isArray(items)) continue;
    payload[list.field] = items.filter((item) => {
      const name = (item as Record<string, unknown>)[list.name];
      return typeof name === 'string' && identity.grants.resource(scope.kind, `${host}/${name}`);
    });
  }
}

/** Turns one agent's outcome into its node, checking the answer against the action's output schema. */
export function toNode(outcome: HostOutcome, action: Action, identity: Identity, now = Date.now()): HostNode {
  const host = outcome.host.name;
  if (!outcome.outcome.ok) return unavailable(host, outcome.outcome.error, now);
  const errors = outcome.outcome.errors.map((e) => ({ ...e, host }));
  const failedCollectors = outcome.outcome.failedCollectors;
  const payload = outcome.outcome.payload;
  if (payload === null || payload === undefined) {
    const first = errors[0] ?? errorInfo('internal', 'the agent answered with nothing', 'Check the agent log on that host.');
    return {
      host,
      availability: 'unavailable',
      sampled_at_unix_ms: now,
      failed_collectors: failedCollectors,
      errors: errors.length ? errors : [{ ...first, host }],
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
  applyGrants(fields, action, host, identity);
  const reported = (payload as Record<string, unknown>).sampled_at_unix_ms;
  const sampled = typeof reported === 'number' ? reported : now;
  return {
    ...fields,
    host,
    availability: errors.length || failedCollectors.length ? 'partial' : 'available',
    sampled_at_unix_ms: sampled,
    failed_collectors: failedCollectors,
    errors,
  };
}

export function toEnvelope(nodes: HostNode[]): FleetEnvelope {
  const hosts = [...nodes].sort((a, b) => a.host.localeCompare(b.host));
  return {
    schema_version: 1,
    targeted: hosts.length,
    responded: hosts.filter((node) => node.availability !== 'unavailable').length,
    hosts,
    errors: hosts.flatMap((node) => node.errors),
  };
}

import { z } from 'zod';
import type { Action } from '../../shared/catalog/action.ts';
import { DEFAULT_TIMEOUT_MS, hostTargetShape, TARGET_KEYS } from '../../shared/catalog/targets.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';

const targetArgumentsSchema = z.object(hostTargetShape).strict();

type HostTargetArguments = z.infer<typeof targetArgumentsSchema>;

/** A call's arguments split into what picks hosts, what the action takes, and the confirmation. */
interface CallArguments {
  targets: Record<string, unknown>;
  params: Record<string, unknown>;
  confirm: boolean;
}

export function splitArguments(action: Action, args: Record<string, unknown>): CallArguments {
  const targets: Record<string, unknown> = {};
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (action.runsOn === 'host' && (TARGET_KEYS as readonly string[]).includes(key)) targets[key] = value;
    else if (key === 'confirm' && !('confirm' in action.input.shape)) continue;
    else params[key] = value;
  }
  return { targets, params, confirm: args.confirm === true };
}

/** The action's own parameters, checked against its input schema. */
export function parseParams(action: Action, params: Record<string, unknown>): Record<string, unknown> {
  const parsed = action.input.safeParse(params);
  if (!parsed.success) throw describeIssue(action, parsed.error.issues[0]);
  return parsed.data as Record<string, unknown>;
}

/** The target arguments of a host action (host, hosts, selector, timeout_ms, cursor), checked. */
export function parseTargets(action: Action, targets: Record<string, unknown>): HostTargetArguments {
  const parsed = targetArgumentsSchema.safeParse(targets);
  if (!parsed.success) throw describeIssue(action, parsed.error.issues[0]);
  return parsed.data;
}

/** An invalid_argument naming the offending parameter, with everything the tool accepts. */
function describeIssue(action: Action, issue: z.core.$ZodIssue | undefined): FleetError {
  const shape = action.input.shape as Record<string, z.ZodType>;
  // Everything the tool takes: its own parameters, then what the broker adds (targets, confirm).
  const accepted = [
    ...Object.keys(shape),
    ...(action.runsOn === 'host' ? TARGET_KEYS : []),
    ...(action.risk === 'destructive' && !('confirm' in shape) ? ['confirm'] : []),
  ];
  const required = Object.keys(shape).filter((key) => !(shape[key] as z.ZodType).safeParse(undefined).success);
  const where = issue?.path.length ? issue.path.join('.') : 'arguments';
  const unknown = issue?.code === 'unrecognized_keys' ? ` (${(issue as { keys: string[] }).keys.join(', ')} not accepted)` : '';
  return new FleetError('invalid_argument', `${action.tool}: ${where}: ${issue?.message ?? 'invalid'}${unknown}`, {
    hint: `Accepted parameters: ${accepted.join(', ') || 'none'}${required.length ? `; required: ${required.join(', ')}` : ''}. fleet://actions/${action.id} has the full schema.`,
    details: { accepted, required },
  });
}

/** Beyond an action's own wait: time for the agent to begin the work and for its answer to come back. */
const WAIT_MARGIN_MS = 5_000;

/** The call's deadline: the caller's (or the default), stretched to cover what the action waits for by design. */
export function callTimeoutMs(action: Action, params: Record<string, unknown>, requestedMs = DEFAULT_TIMEOUT_MS): number {
  const waitsMs = action.waitsMs?.(params) ?? 0;
  return waitsMs > 0 ? Math.max(requestedMs, waitsMs + WAIT_MARGIN_MS) : requestedMs;
}

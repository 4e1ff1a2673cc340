import { FleetError } from '../../shared/errors/fleet-error.ts';
import { forbidden, requireConfirm } from './authorization.ts';
import type { BrokerActionContext, BrokerActionHandler } from './broker-action.ts';
import { parseParams, splitArguments } from './call-arguments.ts';
import type { RouteCall, RunResult } from './call-route.ts';

/** The route of actions the broker answers itself, with its own handler. */
export async function runOnBroker(call: RouteCall, handler: BrokerActionHandler | undefined, context: BrokerActionContext): Promise<RunResult> {
  const { action, identity } = call;
  if (!handler) throw new FleetError('unsupported', `the broker has no handler for ${action.id}`);
  const { params, confirm } = splitArguments(action, call.args);
  const parsed = parseParams(action, params);
  const targets = handler.targets?.(parsed, context) ?? [];
  if (action.risk !== 'read') {
    const denied = targets.filter((host) => !identity.grants.host(host, 'write'));
    if (denied.length) throw forbidden(action, denied);
  }
  requireConfirm(
    action,
    confirm,
    targets.map((host) => ({ host })),
  );
  await call.begin(targets);
  const output = action.output.parse(await handler.run(parsed, context)) as Record<string, unknown>;
  return { action, structured: output, isError: false, shape: 'broker' };
}

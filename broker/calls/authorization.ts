import type { Action, Level } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Identity } from '../auth/identities.ts';
import type { ToolFilter } from '../auth/tool-filter.ts';

/** The level an identity acts at: its own, capped by the broker's operations level. */
export function effectiveLevel(identity: Identity, operationsLevel: Level): Level {
  return Math.min(identity.level, operationsLevel) as Level;
}

/**
 * Whether the identity may see the action at all: within its level, able to
 * write if the action writes, and switched on by the broker's tool filter
 * (`--disable-tools`, `--enable-tools`) and by the identity's own.
 */
export function allowsAction(identity: Identity, action: Action, operationsLevel: Level, tools: ToolFilter): boolean {
  if (action.level > effectiveLevel(identity, operationsLevel)) return false;
  if (!tools.allows(action) || (identity.tools && !identity.tools.allows(action))) return false;
  return action.risk === 'read' || identity.grants.writesAnything();
}

/** A change on hosts this identity holds no write grant on. */
export function forbidden(action: Action, hosts: string[]): FleetError {
  return new FleetError('forbidden', `${action.tool} needs a write grant on ${hosts.join(', ')}, which this identity does not have`, {
    hint: 'Ask for an identity whose grants include write on those hosts (fleetmesh identity create … --grant host:NAME=write).',
  });
}

/** Refuses a destructive call without confirm: true, when it would act on `targets`. */
export function requireConfirm(action: Action, confirm: boolean, targets: { host: string; resource?: string }[]): void {
  if (action.risk !== 'destructive' || confirm) return;
  const list = targets.map((t) => t.resource ?? t.host).join(', ') || 'nothing';
  throw new FleetError('confirm_required', `${action.tool} is destructive; it would act on: ${list}`, {
    hint: 'Nothing was changed. Call again with confirm: true to go ahead.',
    details: { targets },
  });
}

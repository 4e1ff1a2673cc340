import { FleetError } from '../../shared/errors/fleet-error.ts';
import { closestNames } from '../../shared/format/closest-names.ts';

/** One entry of `fleet://actions` as the broker publishes it for its surface. */
interface PublishedAction {
  id: string;
  /** The action's own tool name (`get_fleet_status`), whatever the surface. */
  name: string;
  /** The tool that runs it on the broker's surface (`get_fleet_status`, `fleet`, `execute_action`). */
  tool: string;
}

/** `fleet://actions`: the actions this identity may run, and the surface that runs them. */
export interface PublishedCatalog {
  surface: string;
  actions: PublishedAction[];
}

/**
 * The tool call that runs `wanted` (a tool name or an action id) with `args`
 * the way the broker's surface exposes it: the action's own tool, the domain
 * tool with `{action, params, confirm}`, or `execute_action`. A tool of the
 * surface itself (`find_action`, a domain tool) is called as it is.
 */
export function routeCall(
  catalog: PublishedCatalog,
  surfaceTools: readonly string[],
  wanted: string,
  args: Record<string, unknown>,
): { name: string; arguments: Record<string, unknown> } {
  const action = catalog.actions.find((a) => a.id === wanted || a.name === wanted);
  if (!action && surfaceTools.includes(wanted)) return { name: wanted, arguments: args };
  if (!action) {
    // Actions first: a domain tool's short name matches too much of any action name.
    const closest = [
      ...new Set([
        ...closestNames(wanted, [...catalog.actions.map((a) => a.name), ...catalog.actions.map((a) => a.id)]),
        ...closestNames(wanted, surfaceTools),
      ]),
    ].slice(0, 3);
    throw new FleetError('not_found', `the broker offers no action "${wanted}" to this identity`, {
      hint: closest.length ? `Closest: ${closest.join(', ')}.` : 'fleet://actions lists what this identity may run.',
    });
  }
  if (catalog.surface === 'individual') return { name: action.tool, arguments: args };
  const { confirm, ...params } = args;
  // The meta surface names an action within its domain tool (`status` of `fleet`); the dynamic one by its id.
  const within = catalog.surface === 'meta' ? action.id.slice(action.id.indexOf('.') + 1) : action.id;
  return { name: action.tool, arguments: { action: within, params, ...(confirm !== undefined ? { confirm } : {}) } };
}

import type { Action } from '../../../shared/catalog/action.ts';
import { domainOf } from '../../../shared/catalog/action.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { closestNames } from '../../../shared/format/closest-names.ts';
import { actionByAnyName, closestActionIds } from './action-names.ts';
import { executionOf, type Surface, type ToolDefinition } from './surface.ts';
import { requiredParameters } from './tool-schemas.ts';

function shortName(action: Action): string {
  return action.id.slice(action.id.indexOf('.') + 1);
}

/**
 * A domain's tool costs the same few words whatever the domain: its actions are
 * an enum of names, and what each does and takes is in fleet://actions, read on
 * demand (a domain adds its names, not a paragraph). JSON Schema 2020-12 is
 * MCP's default dialect, so no `$schema`.
 */
function inputSchema(actions: readonly Action[]) {
  return {
    type: 'object' as const,
    properties: { action: { type: 'string', enum: actions.map(shortName) }, params: { type: 'object' }, confirm: { type: 'boolean' } },
    required: ['action'],
    additionalProperties: false,
  };
}

/** One tool per domain (`docker`, `system`, `fleet`…): {action, params, confirm}. */
export const metaSurface: Surface = {
  name: 'meta',
  tools(visible, icons) {
    const groups = new Map<string, Action[]>();
    for (const action of visible) groups.set(domainOf(action), [...(groups.get(domainOf(action)) ?? []), action]);
    return [...groups.entries()].map(([domain, actions]): ToolDefinition => {
      const readOnly = actions.every((a) => a.risk === 'read');
      return {
        name: domain,
        title: `${domain} actions`,
        description: `Runs one ${domain} action: {"action": NAME, "params": {...}, "confirm": true only for destructive ones}. fleet://actions/${domain}.NAME has its parameters; params also takes the targets.`,
        inputSchema: inputSchema(actions),
        annotations: {
          ...(readOnly
            ? { readOnlyHint: true as const }
            : {
                destructiveHint: actions.some((a) => a.risk === 'destructive'),
                ...(actions.every((a) => a.idempotent) ? { idempotentHint: true as const } : {}),
              }),
          ...(actions.some((a) => a.openWorld) ? {} : { openWorldHint: false as const }),
        },
        ...icons.of(domain),
        ...executionOf(actions),
      };
    });
  },
  resolve(tool, args, visible) {
    const inDomain = visible.filter((a) => domainOf(a) === tool);
    if (inDomain.length === 0) {
      const closest = closestNames(tool, visible.map(domainOf));
      throw new FleetError('not_found', `unknown tool: ${tool}`, {
        hint: `${closest.length ? `Did you mean ${closest.join(', ')}? ` : ''}tools/list shows the tools this identity may use.`,
        ...(closest.length ? { details: { closest } } : {}),
      });
    }
    const name = typeof args.action === 'string' ? args.action : '';
    const action = inDomain.find((a) => shortName(a) === name) ?? actionByAnyName(name, inDomain);
    if (!action) {
      const closest = closestActionIds(`${tool}.${name}`, inDomain).map((id) => id.slice(id.indexOf('.') + 1));
      throw new FleetError('not_found', `${tool} has no action "${name}"`, {
        hint: `Actions of ${tool}: ${inDomain.map(shortName).join(', ')}${closest.length ? `; closest: ${closest.join(', ')}` : ''}.`,
        details: { closest },
      });
    }
    const params = args.params;
    if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) {
      throw new FleetError('invalid_argument', 'params must be an object', { hint: `fleet://actions/${action.id} lists its parameters.` });
    }
    const extra = Object.keys(args).filter((key) => !['action', 'params', 'confirm'].includes(key));
    if (extra.length) {
      throw new FleetError('invalid_argument', `${tool} takes action, params and confirm, not ${extra.join(', ')}`, {
        hint: "Put the action's parameters inside params.",
      });
    }
    return {
      kind: 'action',
      action,
      args: { ...((params as Record<string, unknown>) ?? {}), ...(args.confirm !== undefined ? { confirm: args.confirm } : {}) },
    };
  },
  toolFor: (action) => domainOf(action),
  callLine: (action) => {
    const params = Object.fromEntries(
      requiredParameters(action)
        .filter((p) => p !== 'confirm')
        .map((name) => [name, '…']),
    );
    return `${domainOf(action)} ${JSON.stringify({ action: shortName(action), params, ...(action.risk === 'destructive' ? { confirm: true } : {}) })}`;
  },
};

import { type Action, domainOf } from '../../../shared/catalog/action.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { closestNames } from '../../../shared/format/closest-names.ts';
import { widgetToolMeta } from '../../web/widget-resources.ts';
import { annotationsOf, executionOf, type Surface } from './surface.ts';
import { toolDescription } from './tool-description.ts';
import { advertisedInputSchema, requiredParameters } from './tool-schemas.ts';

function example(action: Action): string {
  const args = Object.fromEntries(requiredParameters(action).map((name) => [name, '…']));
  if (action.risk === 'destructive') args.confirm = 'true';
  return JSON.stringify(args).replace('"true"', 'true');
}

/** One tool per action, named as the seeds name them (docker_logs, scale_service, snapshot). */
export const individualSurface: Surface = {
  name: 'individual',
  tools: (visible, icons) =>
    visible.map((action) => ({
      name: action.tool,
      title: action.title,
      description: toolDescription(action),
      inputSchema: advertisedInputSchema(action),
      annotations: annotationsOf(action),
      ...icons.of(domainOf(action)),
      ...executionOf([action]),
      ...(action.widget ? { _meta: widgetToolMeta(action.widget) } : {}),
    })),
  resolve(tool, args, visible) {
    const action = visible.find((a) => a.tool === tool);
    if (action) return { kind: 'action', action, args };
    const closest = closestNames(
      tool,
      visible.map((a) => a.tool),
    );
    throw new FleetError('not_found', `unknown tool: ${tool}`, {
      hint: `${closest.length ? `Did you mean ${closest.join(', ')}? ` : ''}tools/list shows the tools this identity may use.`,
      ...(closest.length ? { details: { closest } } : {}),
    });
  },
  toolFor: (action) => action.tool,
  callLine: (action) => `${action.tool} ${example(action)}`,
};

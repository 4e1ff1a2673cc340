import type { Action } from '../../../shared/catalog/action.ts';
import { annotationsOf, type Surface } from './surface.ts';
import { advertisedInputSchema, requiredParameters } from './tool-schemas.ts';

function example(action: Action): string {
  const args = Object.fromEntries(requiredParameters(action).map((name) => [name, '…']));
  if (action.risk === 'destructive') args.confirm = 'true';
  return JSON.stringify(args).replace('"true"', 'true');
}

/** One tool per action, named as the seeds name them (docker_logs, scale_service, snapshot). */
export const individualSurface: Surface = {
  name: 'individual',
  tools: (visible) =>
    visible.map((action) => ({
      name: action.tool,
      title: action.title,
      description: action.description,
      inputSchema: advertisedInputSchema(action),
      annotations: annotationsOf(action),
    })),
  resolve(tool, args, visible) {
    const action = visible.find((a) => a.tool === tool);
    return action
      ? { kind: 'action', action, args }
      : { kind: 'error', code: 'not_found', message: `unknown tool: ${tool}`, hint: 'tools/list shows the tools this identity may use.' };
  },
  toolFor: (action) => action.tool,
  callLine: (action) => `${action.tool} ${example(action)}`,
};

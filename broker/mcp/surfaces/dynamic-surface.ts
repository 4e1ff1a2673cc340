import type { Action } from '../../../shared/catalog/action.ts';
import { CATALOG } from '../../../shared/catalog/catalog.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { actionByAnyName, closestActionIds } from './action-names.ts';
import { searchActions } from './action-search.ts';
import { executionOf, type Surface, type ToolDefinition } from './surface.ts';
import { toolDescription } from './tool-description.ts';
import { parameterSummary, requiredParameters, toolInputSchema } from './tool-schemas.ts';

const SCHEMA = 'https://json-schema.org/draft/2020-12/schema';
/** How many of the best matches carry their full input schema. */
const FULL_SCHEMAS = 5;

const findTool: ToolDefinition = {
  name: 'find_action',
  title: 'Find an action',
  description:
    'Searches the fleet action catalog (locally, nothing is called) and returns the best matches: id, title, description, required parameters, whether it changes or destroys, related actions. The top 5 carry their full input schema. Then run one with execute_action.',
  inputSchema: {
    $schema: SCHEMA,
    type: 'object',
    properties: {
      query: { type: 'string', maxLength: 256, description: 'Plain words: a resource and a verb, such as "container logs" or "restart service".' },
      limit: { type: 'integer', minimum: 1, maximum: 50, description: 'How many matches (default 10).' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

/** The action execute_action's description shows as an example: the catalog's first read an agent answers. */
const example = CATALOG.find((action) => action.runsOn === 'host' && action.risk === 'read') as Action;

const executeTool: ToolDefinition = {
  name: 'execute_action',
  title: 'Execute an action',
  description: `Runs one fleet action by id (from find_action): {"action": "${example.id}", "params": {...}, "confirm": true only for destructive ones}. Parameters are checked before anything is sent; a wrong id is answered with the closest ones.`,
  inputSchema: {
    $schema: SCHEMA,
    type: 'object',
    properties: {
      action: { type: 'string', description: `The action id, such as ${example.id} (a tool name such as ${example.tool} works too).` },
      params: { type: 'object', additionalProperties: true, description: "The action's parameters, targets included (host, hosts, selector, timeout_ms)." },
      confirm: { type: 'boolean', description: 'Must be true for a destructive action to run.' },
    },
    required: ['action'],
    additionalProperties: false,
  },
  annotations: { destructiveHint: true, openWorldHint: false },
};

function match(action: Action, index: number) {
  return {
    id: action.id,
    title: action.title,
    description: toolDescription(action),
    risk: action.risk,
    level: action.level,
    mutating: action.risk !== 'read',
    destructive: action.risk === 'destructive',
    required: requiredParameters(action),
    related: [...(action.related ?? [])],
    schema_uri: `fleet://actions/${action.id}`,
    ...(index < FULL_SCHEMAS ? { input_schema: toolInputSchema(action) } : { parameters: parameterSummary(action) }),
  };
}

/** Two tools whatever the catalog's size: find_action, then execute_action. */
export const dynamicSurface: Surface = {
  name: 'dynamic',
  tools: (visible, icons) =>
    visible.length
      ? [
          { ...findTool, ...icons.of(undefined) },
          { ...executeTool, ...icons.of(undefined), ...executionOf(visible) },
        ]
      : [],
  resolve(tool, args, visible) {
    if (tool === 'find_action') {
      const query = args.query;
      const limit = args.limit ?? 10;
      if (typeof query !== 'string' || query.length > 256) {
        throw new FleetError('invalid_argument', 'find_action: query must be a string of at most 256 characters', {
          hint: 'Such as {"query": "container logs"}.',
        });
      }
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 50) {
        throw new FleetError('invalid_argument', 'find_action: limit must be a whole number from 1 to 50', { hint: 'Leave it out for 10.' });
      }
      const found = searchActions(query, visible, limit);
      return { kind: 'local', structured: { query, count: found.length, matches: found.map((entry, i) => match(entry.action, i)) } };
    }
    if (tool === 'execute_action') {
      const name = typeof args.action === 'string' ? args.action : '';
      const action = actionByAnyName(name, visible);
      if (!action) {
        const closest = closestActionIds(name, visible);
        throw new FleetError('not_found', `no action is called "${name}"`, {
          hint: closest.length ? `Closest ids: ${closest.join(', ')}. find_action searches the catalog.` : 'find_action searches the catalog.',
          details: { closest },
        });
      }
      const params = args.params;
      if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) {
        throw new FleetError('invalid_argument', 'params must be an object', { hint: `fleet://actions/${action.id} lists its parameters.` });
      }
      return {
        kind: 'action',
        action,
        args: { ...((params as Record<string, unknown>) ?? {}), ...(args.confirm !== undefined ? { confirm: args.confirm } : {}) },
      };
    }
    throw new FleetError('not_found', `unknown tool: ${tool}`, { hint: 'This server offers find_action and execute_action.' });
  },
  toolFor: () => 'execute_action',
  callLine: (action) => {
    const params = Object.fromEntries(
      requiredParameters(action)
        .filter((p) => p !== 'confirm')
        .map((name) => [name, '…']),
    );
    return `execute_action ${JSON.stringify({ action: action.id, params, ...(action.risk === 'destructive' ? { confirm: true } : {}) })}`;
  },
};

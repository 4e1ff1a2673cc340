import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CATALOG } from '../../shared/catalog/catalog.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { defineCommand } from '../command.ts';
import { closeSession, connectToBroker, MCP_CLIENT_FLAGS, resolveToken } from '../mcp-client.ts';
import { optionArguments } from './option-arguments.ts';
import { type PublishedCatalog, routeCall } from './route-call.ts';

/** `k=v`: the value as JSON when it parses (numbers, booleans, objects), else as text. */
function parseArg(text: string): [string, unknown] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new FleetError('invalid_argument', `--arg "${text}" is not key=value`, { hint: 'Such as --arg lines=100 or --arg name=web.' });
  const key = text.slice(0, eq);
  const raw = text.slice(eq + 1);
  try {
    return [key, JSON.parse(raw)];
  } catch {
    return [key, raw];
  }
}

/**
 * The broker words a refused destructive call for MCP clients ("call again with
 * confirm: true"); from this command that argument is the --confirm flag.
 */
export function forTheCommandLine(result: CallToolResult, text: string): string {
  const error = (result.structuredContent as { error?: { code?: string } } | undefined)?.error;
  return result.isError && error?.code === 'confirm_required' ? text.replaceAll('confirm: true', '--confirm') : text;
}

/** `fleet://actions` from the broker: what this identity may run and how its surface runs it. */
async function readCatalog(client: Client): Promise<PublishedCatalog> {
  const { contents } = await client.readResource({ uri: 'fleet://actions' });
  const text = contents[0] && 'text' in contents[0] ? contents[0].text : '';
  return JSON.parse(text) as PublishedCatalog;
}

export const callCommand = defineCommand({
  spec: {
    name: 'call',
    summary: 'Run any tool through the broker with an identity token; per-host progress on stderr.',
    usage: "fleetmesh call TOOL [--host H | --hosts a,b | --selector k=v] [--arg k=v …] [--json '{…}'] [--output table|json]",
    details:
      "Exits non-zero when the result is an error. Works whatever tool surface the broker uses: the tool is found in the broker's fleet://actions and called the way its surface runs it.",
    positionals: [{ name: 'TOOL', description: 'a tool name such as get_fleet_status, or an action id such as fleet.status', required: true }],
    // --sort_by mem is taken as the tool's parameter sort_by; an option no parameter has is refused with its --arg spelling.
    extraOptions: true,
    flags: {
      ...MCP_CLIENT_FLAGS,
      host: { type: 'string', description: 'one agent', placeholder: 'NAME', env: false },
      hosts: { type: 'list', description: 'several agents', placeholder: 'A,B', env: false },
      selector: { type: 'string', description: 'agents by label, such as role=db,env!=dev', placeholder: 'SELECTOR', env: false },
      arg: { type: 'list', description: 'one argument; repeat for several', repeatable: true, default: [], placeholder: 'K=V', env: false },
      json: { type: 'string', description: 'arguments as a JSON object', placeholder: 'JSON', env: false },
      confirm: { type: 'boolean', description: 'confirm a destructive action', default: false, env: false },
      output: {
        type: 'string',
        description: 'table: the Markdown text; json: the structured result',
        default: 'table',
        choices: ['table', 'json'],
        placeholder: 'FORMAT',
        env: false,
      },
    },
  },
  async run(parsed, io) {
    const { values } = parsed;
    const tool = parsed.positionals[0] ?? '';
    let args: Record<string, unknown> = {};
    if (values.json) {
      try {
        const json: unknown = JSON.parse(values.json);
        if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error('not an object');
        args = json as Record<string, unknown>;
      } catch (error) {
        throw new FleetError('invalid_argument', `--json is not a JSON object: ${(error as Error).message}`);
      }
    }
    for (const item of values.arg) {
      const [key, value] = parseArg(item);
      args[key] = value;
    }
    if (parsed.extra?.length) {
      const action = CATALOG.find((a) => a.tool === tool || a.id === tool);
      Object.assign(args, optionArguments(tool, parsed.extra, action ? Object.keys(action.input.shape) : undefined));
    }
    if (values.host) args.host = values.host;
    if (values.hosts?.length) args.hosts = values.hosts;
    if (values.selector) args.selector = values.selector;
    if (values.confirm) args.confirm = true;

    const client = await connectToBroker(values.url, resolveToken(values), 'fleetmesh-call');
    try {
      const catalog = await readCatalog(client);
      const { tools } = await client.listTools();
      const { name, arguments: callArgs } = routeCall(
        catalog,
        tools.map((t) => t.name),
        tool,
        args,
      );
      const result = (await client.callTool({ name, arguments: callArgs }, undefined, {
        // Hosts settled of hosts targeted, and what streamed in between (a chunk moves the count a fraction: shown whole).
        onprogress: (progress) => io.stderr(`[${Math.floor(progress.progress)}/${progress.total ?? '?'}] ${progress.message ?? ''}\n`),
        timeout: 120_000,
      })) as CallToolResult;
      if (values.output === 'json') io.stdout(`${JSON.stringify(result.structuredContent ?? null, null, 2)}\n`);
      else io.stdout(`${forTheCommandLine(result, result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n'))}\n`);
      return result.isError ? 1 : 0;
    } finally {
      await closeSession(client);
    }
  },
});

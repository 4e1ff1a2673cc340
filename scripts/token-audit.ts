/**
 * What the lists a client fetches cost in a model's context, counted on the
 * exact JSON a client receives over Streamable HTTP: `tools/list` per tool
 * surface and operations level (every field: schemas, annotations, titles,
 * icons),
 * the first page of resources/list, resources/templates/list and
 * prompts/list, and the server's instructions, with the o200k tokenizer. The
 * lists follow the fleet (a domain no agent serves is left out), so they are
 * counted twice: for a fleet serving every domain (one agent whose collectors
 * claim every action: the full catalog), and for an empty fleet. Writes docs/tokens.json and the
 * README's table; `--check` fails when a figure drifts more than 10% from the
 * committed file, when one is over its budget, or when the README's table is stale.
 */
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { Agent } from '../agent/agent.ts';
import { createIdentity } from '../broker/auth/identities.ts';
import { Broker } from '../broker/broker.ts';
import { inProcessBrokerOptions } from '../broker/broker-options.ts';
import { createJoinToken } from '../broker/enrollment/join-tokens.ts';
import { SURFACE_NAMES, type SurfaceName } from '../broker/mcp/surfaces/surface.ts';
import type { Level } from '../shared/catalog/action.ts';
import { CATALOG } from '../shared/catalog/catalog.ts';
import { silentLogger } from '../shared/log/logger.ts';
import { everyDomainCollectors } from '../test/harness/every-domain-collectors.ts';
import { TEST_AGENT_DEFAULTS } from '../test/harness/test-agent-defaults.ts';

const TOLERANCE = 0.1;
const LEVELS: readonly Level[] = [0, 1, 2, 3];

/**
 * The most a list may cost at any level (tokens), and per tool on the
 * individual surface. The totals were 9,000 and 2,500 for the 61 tools of the
 * first seven domains (147.5 a tool); the 22 check-up, watch, network,
 * notify, backup and install tools raised them, at no more per tool. Every
 * tool's icon URL (about 26 tokens at a 127.0.0.1 address) then came in:
 * descriptions lost what the schema already says, `hosts` and `timeout_ms`
 * moved to the server's instructions, and the individual total went to the
 * first budget's 147.5 a tool for 83 tools rather than drop `selector`, the
 * target a client needs to reach several hosts. The rollout domain's seven
 * tools (pulls, images, roll-forward, compose) and the four files and commands
 * tools (instead of ssh) raised the individual total by the per-tool budget
 * each; the systemd domain's seven journal and service tools, the packages
 * domain's two and log_tail by 147.5 each, and set_alert_thresholds (the
 * console's thresholds, the same action as MCP's) by as much. A client short
 * of context takes the meta or dynamic surface.
 */
const BUDGETS = {
  individual: { tokens: 15_522, tokens_per_tool: 150 },
  meta: { tokens: 3_500 },
  dynamic: { tokens: 500 },
} as const;

interface Figure {
  items: number;
  bytes: number;
  tokens: number;
}

interface Audit {
  tokenizer: 'o200k_base';
  actions: number;
  budgets: typeof BUDGETS;
  /** tools/list per surface, per level. */
  surfaces: Record<SurfaceName, Record<string, Figure>>;
  /** The first page of each list, for a level-3 identity. */
  lists: Record<string, Figure>;
  /** The same lists of a fleet with no agent, for a level-3 identity: tools/list per surface, then the others. */
  empty_fleet: Record<string, Figure>;
}

function figure(items: unknown[], result: unknown): Figure {
  const text = JSON.stringify(result);
  return { items: items.length, bytes: Buffer.byteLength(text), tokens: encode(text).length };
}

/** An SDK client whose every received JSON-RPC result is kept as it came off the wire. */
async function rawClient(url: string, token: string): Promise<{ client: Client; request(method: string): Promise<Record<string, unknown>> }> {
  const client = new Client({ name: 'fleetmesh-token-audit', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  const received = new Map<string | number, Record<string, unknown>>();
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('id' in message && 'result' in message) received.set(message.id, structuredClone(message.result) as Record<string, unknown>);
    deliver?.(message);
  };
  return {
    client,
    async request(method) {
      // The client numbers its own requests; catch whichever id answers this one.
      const before = new Set(received.keys());
      if (method === 'tools/list') await client.listTools();
      else if (method === 'resources/list') await client.listResources();
      else if (method === 'resources/templates/list') await client.listResourceTemplates();
      else await client.listPrompts();
      const id = [...received.keys()].find((key) => !before.has(key));
      const result = id === undefined ? undefined : received.get(id);
      if (!result) throw new Error(`no raw result captured for ${method}`);
      return result;
    },
  };
}

/** An agent whose collectors claim every action of the catalog (each answering nothing): a fleet that serves every domain. */
async function everyDomainAgent(broker: Broker, dataDir: string): Promise<Agent> {
  const collectors = everyDomainCollectors();
  const { token } = await createJoinToken(broker.store, { ttlMs: 60_000, uses: 1, labels: {} });
  const agent = await Agent.start(
    {
      ...TEST_AGENT_DEFAULTS,
      dataDir: join(dataDir, 'agent'),
      brokerAddress: `localhost:${broker.grpcPort}`,
      token,
      caPin: broker.authority.pin,
      name: 'audit',
    },
    silentLogger,
    collectors,
  );
  if (!agent.connection.connected) await once(agent.connection, 'connected');
  return agent;
}

async function measure(): Promise<Audit> {
  const surfaces = {} as Audit['surfaces'];
  const lists: Audit['lists'] = {};
  const emptyFleet: Audit['empty_fleet'] = {};
  for (const surface of SURFACE_NAMES) {
    const dataDir = mkdtempSync(join(tmpdir(), 'fm-token-audit-'));
    const broker = await Broker.start(inProcessBrokerOptions(dataDir, { toolSurface: surface, operationsLevel: 3 }), silentLogger);
    let agent: Agent | undefined;
    try {
      const { token: emptyToken } = await createIdentity(broker.store, { name: `audit-${surface}-empty`, level: 3 });
      const empty = await rawClient(broker.mcpUrl, emptyToken);
      const emptyTools = await empty.request('tools/list');
      emptyFleet[`${surface} tools/list`] = figure(emptyTools.tools as unknown[], emptyTools);
      if (surface === 'individual') {
        const templates = await empty.request('resources/templates/list');
        emptyFleet['resources/templates/list'] = figure(templates.resourceTemplates as unknown[], templates);
        const prompts = await empty.request('prompts/list');
        emptyFleet['prompts/list'] = figure(prompts.prompts as unknown[], prompts);
      }
      await empty.client.close();
      agent = await everyDomainAgent(broker, dataDir);
      surfaces[surface] = {};
      for (const level of LEVELS) {
        const { token } = await createIdentity(broker.store, { name: `audit-${surface}-${level}`, level });
        const { client, request } = await rawClient(broker.mcpUrl, token);
        const tools = await request('tools/list');
        surfaces[surface][String(level)] = figure(tools.tools as unknown[], tools);
        if (surface === 'individual' && level === 3) {
          const resources = await request('resources/list');
          lists['resources/list'] = figure(resources.resources as unknown[], resources);
          const templates = await request('resources/templates/list');
          lists['resources/templates/list'] = figure(templates.resourceTemplates as unknown[], templates);
          const prompts = await request('prompts/list');
          lists['prompts/list'] = figure(prompts.prompts as unknown[], prompts);
          // The targets and shared parameters the tool schemas leave out are explained here, once per session.
          lists['initialize instructions'] = figure([client.getInstructions()], client.getInstructions());
        }
        await client.close();
      }
    } finally {
      await agent?.stop();
      await broker.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return { tokenizer: 'o200k_base', actions: CATALOG.length, budgets: BUDGETS, surfaces, lists, empty_fleet: emptyFleet };
}

/** Every figure over its budget, as a sentence each. */
function overBudget(audit: Audit): string[] {
  const over: string[] = [];
  for (const surface of SURFACE_NAMES) {
    const budget = BUDGETS[surface];
    for (const [level, f] of Object.entries(audit.surfaces[surface])) {
      if (f.tokens > budget.tokens) over.push(`${surface} at level ${level}: ${f.tokens} tokens, budget ${budget.tokens}`);
      if ('tokens_per_tool' in budget && f.items && f.tokens / f.items > budget.tokens_per_tool)
        over.push(`${surface} at level ${level}: ${Math.round(f.tokens / f.items)} tokens per tool, budget ${budget.tokens_per_tool}`);
    }
  }
  return over;
}

function drifted(audit: Audit, committed: Audit): string[] {
  const pairs: [string, number, number | undefined][] = [];
  for (const surface of SURFACE_NAMES)
    for (const [level, f] of Object.entries(audit.surfaces[surface]))
      pairs.push([`${surface} level ${level}`, f.tokens, committed.surfaces?.[surface]?.[level]?.tokens]);
  for (const [name, f] of Object.entries(audit.lists)) pairs.push([name, f.tokens, committed.lists?.[name]?.tokens]);
  for (const [name, f] of Object.entries(audit.empty_fleet)) pairs.push([`empty fleet ${name}`, f.tokens, committed.empty_fleet?.[name]?.tokens]);
  return pairs
    .filter(([, now, before]) => !before || Math.abs(now - before) / before > TOLERANCE)
    .map(([name, now, before]) => `${name}: ${now} tokens (committed ${before ?? 'none'})`);
}

const README_START = '<!-- token-audit:start -->';
const README_END = '<!-- token-audit:end -->';

/** A Markdown table with padded columns, as the formatter leaves it. */
function markdownTable(rows: string[][]): string[] {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(3, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  const [head = [], ...body] = rows;
  return [line(head), `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`, ...body.map(line)];
}

/** The README's table: tools/list tokens per surface and level, then the other lists. */
function readmeTable(audit: Audit): string {
  const tools = SURFACE_NAMES.map((surface) => {
    const budget = BUDGETS[surface];
    return [
      surface,
      ...LEVELS.map((level) => {
        const f = audit.surfaces[surface][String(level)];
        return f ? `${f.tokens} (${f.items} tools)` : '-';
      }),
      `${budget.tokens}${'tokens_per_tool' in budget ? `, ${budget.tokens_per_tool} per tool` : ''}`,
    ];
  });
  const lines = [
    ...markdownTable([['tools/list (o200k tokens)', 'level 0', 'level 1', 'level 2', 'level 3', 'budget'], ...tools]),
    '',
    ...markdownTable([
      ['first page, level 3', 'items', 'tokens'],
      ...Object.entries(audit.lists).map(([name, f]) => [name, String(f.items), String(f.tokens)]),
    ]),
    '',
    ...markdownTable([
      ['empty fleet (no agent), level 3', 'items', 'tokens'],
      ...Object.entries(audit.empty_fleet ?? {}).map(([name, f]) => [name, String(f.items), String(f.tokens)]),
    ]),
  ];
  return `${README_START}\n${lines.join('\n')}\n${README_END}`;
}

function withTable(readme: string, table: string): string {
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < 0) throw new Error(`README.md has no ${README_START} … ${README_END} block for the token table`);
  return readme.slice(0, start) + table + readme.slice(end + README_END.length);
}

function print(audit: Audit, committed?: Audit): void {
  for (const surface of SURFACE_NAMES)
    for (const [level, f] of Object.entries(audit.surfaces[surface])) {
      const before = committed?.surfaces?.[surface]?.[level]?.tokens;
      process.stdout.write(
        `${surface.padEnd(10)} level ${level} ${String(f.items).padStart(4)} tools ${String(f.tokens).padStart(7)} tokens${before !== undefined ? ` (committed ${before})` : ''}\n`,
      );
    }
  for (const [name, f] of Object.entries(audit.lists))
    process.stdout.write(`${name.padEnd(26)} ${String(f.items).padStart(4)} items ${String(f.tokens).padStart(7)} tokens\n`);
  for (const [name, f] of Object.entries(audit.empty_fleet))
    process.stdout.write(`empty fleet ${name.padEnd(26)} ${String(f.items).padStart(4)} items ${String(f.tokens).padStart(7)} tokens\n`);
}

const target = fileURLToPath(new URL('../docs/tokens.json', import.meta.url));
const readmePath = fileURLToPath(new URL('../README.md', import.meta.url));
const audit = await measure();
const problems = overBudget(audit);
if (process.argv.includes('--check')) {
  const committed = JSON.parse(readFileSync(target, 'utf8')) as Audit;
  print(audit, committed);
  const drift = drifted(audit, committed);
  if (drift.length)
    problems.push(`figures drifted more than ${TOLERANCE * 100}% from docs/tokens.json (run npm run audit:tokens and commit it): ${drift.join('; ')}`);
  if (!readFileSync(readmePath, 'utf8').includes(readmeTable(committed)))
    problems.push('README.md token table differs from docs/tokens.json: run npm run audit:tokens');
} else {
  writeFileSync(target, `${JSON.stringify(audit, null, 2)}\n`);
  writeFileSync(readmePath, withTable(readFileSync(readmePath, 'utf8'), readmeTable(audit)));
  print(audit);
}
for (const problem of problems) process.stderr.write(`${problem}\n`);
process.exit(problems.length ? 1 : 0);

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { createIdentity } from '../../broker/auth/identities.ts';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { DockerIndexer } from '../../broker/domains/docker/docker-indexer.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { simulatedAgent } from '../fleet/simulated-agent.ts';
import { preEnroll } from '../mesh/bench-fleet.ts';
import type { ScenarioResult } from '../report.ts';

/** What Claude Code accepts in one tool result: text it keeps in the conversation, and tokens of any result. */
const TEXT_CHARS_BUDGET = 50_000;
const STRUCTURED_TOKENS_BUDGET = 25_000;
const SYSTEM_STATUS_TEXT_TOKENS_BUDGET = 6_000;
async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the simulated agents');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/**
 * N simulated agents on a broker; then the answers a model reads most, fleet-wide
 * with default arguments, measured as a client receives them: text characters and
 * o200k tokens, structuredContent tokens, beside the budgets.
 */
export async function tokensScenario(agentCount: number): Promise<ScenarioResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fm-bench-tokens-'));
  process.stderr.write(`  enrolling ${agentCount} simulated agents…\n`);
  const enrolled = await preEnroll(dataDir, agentCount);
  const broker = await Broker.start(inProcessBrokerOptions(dataDir, { operationsLevel: 3 }), silentLogger);
  const connections = enrolled.agents.map((identity, i) => simulatedAgent(identity, i, enrolled, `localhost:${broker.grpcPort}`));
  const client = new Client({ name: 'fleetmesh-bench', version: '1.0.0' });
  try {
    for (const connection of connections) connection.start();
    await until(() => broker.registry.list().filter((h) => h.state === 'online').length === agentCount, 300_000);
    await until(() => broker.index.indexer(DockerIndexer).inventoryEntries().length >= agentCount - Math.ceil(agentCount / 20), 60_000);
    const { token } = await createIdentity(broker.store, { name: 'bench-tokens', level: 3 });
    await client.connect(new StreamableHTTPClientTransport(new URL(broker.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    const calls: [string, string, Record<string, unknown>][] = [
      ['get_fleet_status', 'get_fleet_status', {}],
      ['system_status', 'system_status', {}],
      ['docker_list', 'docker_list', {}],
      ['list_agents', 'list_agents', {}],
      ['find', 'find', {}],
      ['find type=container', 'find', { type: 'container' }],
      ['describe host', 'describe', { type: 'host', id: enrolled.agents[7]?.name ?? '' }],
    ];
    const figures: Record<string, number | string> = {
      agents: agentCount,
      budgets: `text ≤ ${TEXT_CHARS_BUDGET} chars, structuredContent ≤ ${STRUCTURED_TOKENS_BUDGET} tokens, system_status text ≤ ${SYSTEM_STATUS_TEXT_TOKENS_BUDGET} tokens`,
    };
    const over: string[] = [];
    for (const [label, tool, args] of calls) {
      const result = (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
      const text = textOf(result);
      const textTokens = encode(text).length;
      const structuredTokens = encode(JSON.stringify(result.structuredContent ?? {})).length;
      figures[`${label}: text chars`] = text.length;
      figures[`${label}: text tokens`] = textTokens;
      figures[`${label}: structuredContent tokens`] = structuredTokens;
      const page = (result.structuredContent as { page?: { of: number } } | undefined)?.page;
      if (page) figures[`${label}: pages of hosts`] = page.of;
      if (result.isError) over.push(`${label} failed: ${text.slice(0, 200)}`);
      if (text.length > TEXT_CHARS_BUDGET) over.push(`${label} text`);
      if (structuredTokens > STRUCTURED_TOKENS_BUDGET) over.push(`${label} structuredContent`);
      if (tool === 'system_status' && textTokens > SYSTEM_STATUS_TEXT_TOKENS_BUDGET) over.push(`${label} text tokens`);
    }
    figures['over budget'] = over.length ? over.join('; ') : 'none';
    return { scenario: `tokens, ${agentCount} agents`, figures };
  } finally {
    await client.close().catch(() => {});
    await Promise.all(connections.map((c) => c.stop()));
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

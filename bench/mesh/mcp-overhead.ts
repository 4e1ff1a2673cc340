import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, mcpClient } from '../../test/harness/mcp-client.ts';
import { buildDist } from '../fleet/build-dist.ts';
import { loadDistBroker } from '../fleet/dist-broker.ts';
import { simulatedAgent } from '../fleet/simulated-agent.ts';
import { percentile, type ScenarioResult } from '../report.ts';
import { preEnroll } from './bench-fleet.ts';

/**
 * A minimal MCP client over one kept-alive connection: a POST of one JSON-RPC
 * request and the whole answer read as text, so the broker's own cost shows
 * apart from an SDK client's.
 */
function plainClient(mcpUrl: string, token: string) {
  const url = new URL(mcpUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let sessionId: string | undefined;
  let nextId = 1;
  const post = (message: object) =>
    new Promise<string>((resolve, reject) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
        'mcp-protocol-version': '2025-06-18',
      };
      if (sessionId) headers['mcp-session-id'] = sessionId;
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers }, (res) => {
        const session = res.headers['mcp-session-id'];
        if (typeof session === 'string') sessionId = session;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => (res.statusCode && res.statusCode < 300 ? resolve(text) : reject(new Error(`HTTP ${res.statusCode}: ${text}`))));
      });
      req.on('error', reject);
      req.end(JSON.stringify(message));
    });
  return {
    async open(): Promise<void> {
      await post({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
      });
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    },
    call: (name: string, args: object) => post({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }),
    close: () => agent.destroy(),
  };
}

/**
 * Calls of each kind made before the measured ones: they warm the connection
 * pools and let V8 optimise the paths of a call. After 20 the median of the
 * next 200 was about twice that of a warmed broker (docs/performance.md).
 */
const WARM_UP_CALLS = 500;

/**
 * What MCP adds to one call on one local agent: `agent_info {host}` through an
 * SDK client over Streamable HTTP, against the same call sent straight to the
 * broker's fan-out, alternated in the same process so both see the same
 * machine. The broker runs from the build, as in production. A third call
 * each round goes through a minimal HTTP client (plainClient): the broker's
 * own share of the overhead, without the SDK client's fetch and parsing.
 * With `profileDir`, the measured calls (client, broker and agent alike: one
 * process) are profiled to `mcp-overhead.cpuprofile` there.
 */
export async function mcpOverheadScenario(calls: number, profileDir?: string): Promise<ScenarioResult> {
  await buildDist();
  const { Broker, inProcessBrokerOptions, createIdentity, silentLogger } = await loadDistBroker();
  const dataDir = mkdtempSync(join(tmpdir(), 'fm-bench-mcp-'));
  const enrolled = await preEnroll(dataDir, 1);
  const identity = enrolled.agents[0] as (typeof enrolled.agents)[number];
  const broker = await Broker.start(inProcessBrokerOptions(dataDir), silentLogger);
  const agent = simulatedAgent(identity, 0, enrolled, `localhost:${broker.grpcPort}`, { allDockerUp: true });
  try {
    agent.start();
    while (broker.registry.find(identity.name)?.state !== 'online') await new Promise((resolve) => setTimeout(resolve, 50));
    const host = broker.registry.find(identity.name);
    if (!host) throw new Error('the agent is not registered');
    const client = await mcpClient(broker, (await createIdentity(broker.store, { name: 'bench-mcp', level: 1 })).token);
    const plain = plainClient(broker.mcpUrl, (await createIdentity(broker.store, { name: 'bench-plain', level: 1 })).token);
    await plain.open();
    const direct: number[] = [];
    const mcp: number[] = [];
    const plainMs: number[] = [];
    const profiler = profileDir ? new Session() : undefined;
    for (let i = 0; i < calls + WARM_UP_CALLS; i++) {
      if (i === WARM_UP_CALLS && profiler) {
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
      }
      let started = performance.now();
      const [outcome] = await broker.fanOut([host], { action: 'agent.info', params: {}, timeoutMs: 10_000, caller: 'bench' });
      const directMs = performance.now() - started;
      if (!outcome?.outcome.ok) throw new Error('the direct call failed');
      started = performance.now();
      const result = await call(client, 'agent_info', { host: identity.name });
      const mcpMs = performance.now() - started;
      if (result.isError) throw new Error('the MCP call failed');
      started = performance.now();
      const answer = await plain.call('agent_info', { host: identity.name });
      const plainCallMs = performance.now() - started;
      if (!answer.includes(identity.agentId)) throw new Error(`the plain MCP call failed: ${answer.slice(0, 200)}`);
      if (i < WARM_UP_CALLS) continue;
      direct.push(directMs);
      mcp.push(mcpMs);
      plainMs.push(plainCallMs);
    }
    if (profiler && profileDir) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(join(profileDir, 'mcp-overhead.cpuprofile'), JSON.stringify(profile));
      profiler.disconnect();
    }
    await client.close();
    plain.close();
    const overhead = mcp.map((ms, i) => ms - (direct[i] ?? 0));
    const brokerOverhead = plainMs.map((ms, i) => ms - (direct[i] ?? 0));
    return {
      scenario: 'mesh, MCP overhead of one call on a local agent',
      figures: {
        calls,
        mcp_agent_info_p50_ms: percentile(mcp, 50),
        direct_fanout_p50_ms: percentile(direct, 50),
        mcp_overhead_p50_ms: percentile(overhead, 50),
        mcp_overhead_p99_ms: percentile(overhead, 99),
        'target: MCP overhead p50': '≤ 2 ms',
        plain_client_agent_info_p50_ms: percentile(plainMs, 50),
        broker_overhead_plain_client_p50_ms: percentile(brokerOverhead, 50),
        broker_overhead_plain_client_p99_ms: percentile(brokerOverhead, 99),
      },
    };
  } finally {
    await agent.stop();
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

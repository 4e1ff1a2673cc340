import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
 * What MCP adds to one call on one local agent: `agent_info {host}` through an
 * SDK client over Streamable HTTP, against the same call sent straight to the
 * broker's fan-out, alternated in the same process so both see the same
 * machine. The broker runs from the build, as in production.
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
    const direct: number[] = [];
    const mcp: number[] = [];
    const profiler = profileDir ? new Session() : undefined;
    for (let i = 0; i < calls + 20; i++) {
      if (i === 20 && profiler) {
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
      // The first calls warm the JIT and the connection pools.
      if (i < 20) continue;
      direct.push(directMs);
      mcp.push(mcpMs);
    }
    if (profiler && profileDir) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(join(profileDir, 'mcp-overhead.cpuprofile'), JSON.stringify(profile));
      profiler.disconnect();
    }
    await client.close();
    const overhead = mcp.map((ms, i) => ms - (direct[i] ?? 0));
    return {
      scenario: 'mesh, MCP overhead of one call on a local agent',
      figures: {
        calls,
        mcp_agent_info_p50_ms: percentile(mcp, 50),
        direct_fanout_p50_ms: percentile(direct, 50),
        mcp_overhead_p50_ms: percentile(overhead, 50),
        mcp_overhead_p99_ms: percentile(overhead, 99),
        'target: MCP overhead p50': '≤ 2 ms',
      },
    };
  } finally {
    await agent.stop();
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

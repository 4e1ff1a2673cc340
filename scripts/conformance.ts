/**
 * Runs the MCP conformance suite's server scenarios that need no fixtures
 * against a real broker with a real agent. The suite's client sends no
 * credentials, so it talks to a small local proxy that adds the bearer token of
 * a test identity and passes everything else (Host and Origin included) through
 * untouched, so the DNS-rebinding checks still hit the broker's own.
 *
 * The suite's 0.1 line covers the 2025 revisions only; the line that adds
 * 2026-07-28 (0.2.0 alphas) needs Node 22 (fs.globSync), and Node 20 must keep
 * working. So the 2026-07-28 era is checked here too, through the same proxy,
 * with the v2 SDK client pinned to that revision: discovery, then each list.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Agent } from '../agent/agent.ts';
import { createIdentity } from '../broker/auth/identities.ts';
import { Broker } from '../broker/broker.ts';
import { inProcessBrokerOptions } from '../broker/broker-options.ts';
import { createJoinToken } from '../broker/enrollment/join-tokens.ts';
import { loopbackHosts } from '../broker/http/listen-http.ts';
import { silentLogger } from '../shared/log/logger.ts';

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list', 'server-sse-multiple-streams', 'dns-rebinding-protection'];
const SUITE = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url));

const root = mkdtempSync(join(tmpdir(), 'fm-conformance-'));
let upstreamPort = 0;
let token = '';
const proxy = createServer((req, res) => {
  const upstream = request(
    { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${token}` } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
// Both address families: the suite dials localhost, which may resolve to ::1 first.
await new Promise<void>((resolve, reject) => {
  proxy.once('error', () => proxy.listen(0, '127.0.0.1', resolve));
  proxy.listen(0, '::', resolve);
  void reject;
});
const proxyPort = (proxy.address() as { port: number }).port;

const broker = await Broker.start(
  inProcessBrokerOptions(join(root, 'broker'), {
    mcpAllowedHosts: loopbackHosts(proxyPort),
    mcpAllowedOrigins: loopbackHosts(proxyPort).map((host) => `http://${host}`),
    mcpPublicUrl: `http://localhost:${proxyPort}/mcp`,
  }),
  silentLogger,
);
upstreamPort = broker.mcp.port;
token = (await createIdentity(broker.store, { name: 'conformance', level: 1 })).token;
const agent = await Agent.start(
  {
    dataDir: join(root, 'agent'),
    brokerAddress: `localhost:${broker.grpcPort}`,
    token: (await createJoinToken(broker.store, { ttlMs: 60_000, uses: 1, labels: {} })).token,
    caPin: broker.authority.pin,
    name: 'conformance-host',
    labels: {},
    dockerAddress: '/nonexistent/docker.sock',
    sandboxLabel: 'fleetmesh.sandbox',
    alertThresholds: { cpu: 90, memory: 85, disk: 90 },
    proxmox: undefined,
    backoffBaseMs: 500,
    backoffCapMs: 30_000,
    sampleIntervalMs: 5000,
    healthListen: undefined,
    logLevel: 'error',
    logFormat: 'text',
  },
  silentLogger,
  [],
);
await agent.connection.waitConnected();

let failed = 0;
for (const scenario of SCENARIOS) {
  // Asynchronously: the broker and the proxy answer from this very process.
  const child = spawn(process.execPath, [SUITE, 'server', '--url', `http://localhost:${proxyPort}/mcp`, '--scenario', scenario], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (data: Buffer) => {
    output += data.toString();
  });
  child.stderr.on('data', (data: Buffer) => {
    output += data.toString();
  });
  const status = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const bad = status !== 0 || /\bFAILURE\b/.test(output);
  process.stdout.write(`${bad ? 'FAIL' : 'pass'}  ${scenario}\n`);
  if (bad) {
    failed += 1;
    process.stdout.write(`${output}\n`);
  }
}
const MODERN = '2026-07-28';
try {
  const client = new Client({ name: 'conformance-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://localhost:${proxyPort}/mcp`)));
  if (client.getNegotiatedProtocolVersion() !== MODERN) throw new Error(`negotiated ${client.getNegotiatedProtocolVersion()}, not ${MODERN}`);
  const tools = await client.listTools();
  const resources = await client.listResources();
  const prompts = await client.listPrompts();
  if (!tools.tools.length || !resources.resources.length || !prompts.prompts.length) throw new Error('a list came back empty');
  const called = await client.callTool({ name: 'agent_info', arguments: { host: 'conformance-host' } });
  if (called.isError) throw new Error('agent_info failed');
  await client.close();
  process.stdout.write(`pass  ${MODERN}: server/discover, tools/list, resources/list, prompts/list, tools/call\n`);
} catch (error) {
  failed += 1;
  process.stdout.write(`FAIL  ${MODERN}: ${(error as Error).message}\n`);
}
await agent.stop();
await broker.stop();
proxy.close();
rmSync(root, { recursive: true, force: true });
process.stdout.write(
  failed ? `${failed} of ${SCENARIOS.length + 1} checks failed\n` : `all ${SCENARIOS.length} conformance scenarios and the ${MODERN} check passed\n`,
);
process.exit(failed ? 1 : 0);

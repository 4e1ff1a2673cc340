import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Agent } from '../../agent/agent.ts';
import type { BrokerOptions } from '../../broker/broker-options.ts';
import { type ProxmoxFlagValues, type ProxmoxOptions, resolveProxmoxOptions } from '../../shared/domains/proxmox/proxmox-options.ts';
import { captureLogger } from '../harness/capture-logger.ts';
import { call, identityToken, mcpClient, text } from '../harness/mcp-client.ts';
import { makeTempDir } from '../harness/temp-dir.ts';
import { startTestFleet, type TestFleet } from '../harness/test-fleet.ts';
import { PveSimulator, type SimToken, simulatorTokens } from './pve-simulator.ts';

export interface PveAgentSetup extends Partial<ProxmoxFlagValues> {
  /** The simulated node whose API the agent talks to (default pve1). */
  node?: string;
  /** Give none of the trust flags (Node's CA store decides), instead of pinning the node's fingerprint. */
  systemTrust?: boolean;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

/**
 * A PVE simulator, a broker with in-process agents whose proxmox collectors
 * talk to it, and an MCP client, with every log line and every tool result
 * kept so a test can check that no token secret ever shows up in them.
 */
export interface PveTestFleet {
  sim: PveSimulator;
  fleet: TestFleet;
  client: Client;
  tokens: { read: SimToken; power: SimToken; bare: SimToken };
  /** Token files: read, power, bare. */
  files: { read: string; power: string; bare: string };
  dir: string;
  /** Writes a file into the test's directory and returns its path. */
  file(name: string, content: string): string;
  /** Writes a token file whose secret (the text after the last =, or all of it) must never show up anywhere. */
  tokenFile(name: string, content: string): string;
  /** Starts an agent with the default collectors and these proxmox flags (a read token and the node's fingerprint unless given). */
  addPveAgent(name: string, setup?: PveAgentSetup): Promise<Agent>;
  call: (tool: string, args?: Record<string, unknown>) => ReturnType<typeof call>;
  /** Every secret a test made, and everything that was written where a secret must never go. */
  secrets(): string[];
  exposed(): string;
  stop(): Promise<void>;
}

export async function startPveTestFleet(options: { taskDurationMs?: number; broker?: Partial<BrokerOptions> } = {}): Promise<PveTestFleet> {
  const { broker: brokerOverrides = {}, ...simOptions } = options;
  const tokens = simulatorTokens();
  const sim = await PveSimulator.start({ tokens: Object.values(tokens), ...simOptions });
  const temp = makeTempDir('fleetmesh-pve-');
  const logs = captureLogger();
  const fleet = await startTestFleet({ log: logs.log, ...brokerOverrides });
  const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
  const results: string[] = [];
  const extraSecrets: string[] = [];
  const file = (name: string, content: string) => {
    const path = join(temp.path, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };
  const files = {
    read: file('read.token', sim.tokenLine(tokens.read.id)),
    power: file('power.token', sim.tokenLine(tokens.power.id)),
    bare: file('bare.token', sim.tokenLine(tokens.bare.id)),
  };
  return {
    sim,
    fleet,
    client,
    tokens,
    files,
    dir: temp.path,
    file,
    tokenFile(name, content) {
      const secret = /=(\S+)\s*$/.exec(content)?.[1] ?? content.trim();
      if (secret) extraSecrets.push(secret);
      return file(name, content);
    },
    async addPveAgent(name, setup = {}) {
      const { node = 'pve1', systemTrust = false, timeoutMs, maxResponseBytes, ...flags } = setup;
      const trustGiven = systemTrust || flags.fingerprint !== undefined || flags.caFile !== undefined || flags.insecure === true;
      const resolved = resolveProxmoxOptions({
        endpoint: sim.endpoint(node),
        tokenFile: files.read,
        actionTokenFile: undefined,
        caFile: undefined,
        insecure: false,
        ...flags,
        fingerprint: flags.fingerprint ?? (trustGiven ? undefined : sim.fingerprint(node)),
      }) as ProxmoxOptions;
      const proxmox = { ...resolved, ...(timeoutMs ? { timeoutMs } : {}), ...(maxResponseBytes ? { maxResponseBytes } : {}) };
      // The operator enrolls PVE nodes as members of their cluster (docs/claims.md).
      return fleet.addAgent(name, {
        collectors: 'default',
        log: logs.log,
        domainOptions: { proxmox },
        sampleIntervalMs: 500,
        token: await fleet.token({ roles: ['pve-member'] }),
      });
    },
    async call(tool, args = {}) {
      const result = await call(client, tool, args);
      results.push(text(result), JSON.stringify(result.structuredContent));
      return result;
    },
    secrets: () => [...Object.values(tokens).map((token) => token.secret), ...extraSecrets],
    exposed: () => [...results, ...logs.lines.map((line) => JSON.stringify(line))].join('\n'),
    async stop() {
      await client.close();
      await fleet.stop();
      await sim.stop();
      temp.remove();
    },
  };
}

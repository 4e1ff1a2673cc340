import { CliProcess, runFleetmesh } from './cli-process.ts';

export interface BrokerProcessOptions {
  /** The operations level the broker offers. */
  level?: number;
  /** Fixed ports, to start a broker again where its clients and agents know it (default: any free one). */
  grpcPort?: string;
  mcpPort?: string;
  /** More flags (`--store`, `--heartbeat-interval`…). */
  extra?: readonly string[];
}

/** The command line of a `fleetmesh broker` on loopback, its agents dialling `localhost`. */
export function brokerProcessArgs(dataDir: string, options: BrokerProcessOptions = {}): string[] {
  return [
    'broker',
    '--data-dir',
    dataDir,
    '--grpc-listen',
    `127.0.0.1:${options.grpcPort ?? '0'}`,
    '--mcp-listen',
    `127.0.0.1:${options.mcpPort ?? '0'}`,
    '--advertise-names',
    'localhost',
    ...(options.level === undefined ? [] : ['--operations-level', String(options.level)]),
    ...(options.extra ?? []),
  ];
}

/** Where a broker process listens, from the lines it prints once it does. */
export async function brokerAddresses(broker: CliProcess, timeoutMs?: number): Promise<{ mcpUrl: string; grpcPort: string }> {
  const mcpUrl = (await broker.waitForOutput(/mcp=(http:\/\/\S+\/mcp)/, timeoutMs))[1] as string;
  const grpcPort = (await broker.waitForOutput(/grpc=127\.0\.0\.1:(\d+)/, timeoutMs))[1] as string;
  return { mcpUrl, grpcPort };
}

/**
 * A `fleetmesh agent` process with a join token from `fleetmesh token create`,
 * run with the broker's store flags (`storeArgs`: `--data-dir` and, for
 * PostgreSQL, `--store`), as an operator enrolls a host.
 */
export async function enrolledAgentProcess(storeArgs: readonly string[], grpcPort: string, name: string, agentDir: string): Promise<CliProcess> {
  const enrollment = JSON.parse((await runFleetmesh(['token', 'create', ...storeArgs, '--output', 'json'])).stdout) as { token: string; ca_pin: string };
  return new CliProcess([
    'agent',
    '--broker',
    `localhost:${grpcPort}`,
    '--token',
    enrollment.token,
    '--ca-pin',
    enrollment.ca_pin,
    '--name',
    name,
    '--data-dir',
    agentDir,
  ]);
}

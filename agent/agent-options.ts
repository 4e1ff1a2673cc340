import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { LogFormat, LogLevel } from '../shared/log/logger.ts';
import type { CommandSpec, FlagSpec, FlagValues } from '../shared/options/command-line.ts';
import { LOG_FLAGS } from '../shared/options/common-flags.ts';
import { parseHostPort } from '../shared/options/values.ts';

export const AGENT_FLAGS = {
  broker: { type: 'string', description: 'the broker to dial; remembered after enrollment', placeholder: 'HOST:PORT' },
  token: { type: 'string', description: 'join token from fleetmesh token create (first run, or to re-enroll after expiry)', placeholder: 'TOKEN' },
  'ca-pin': { type: 'string', description: 'the broker CA pin printed with the token', placeholder: 'sha256:HEX' },
  name: { type: 'string', description: 'the name this host has in the fleet', default: hostname(), placeholder: 'NAME' },
  labels: { type: 'labels', description: 'labels for selectors, such as role=db,env=prod', default: {}, placeholder: 'K=V,…' },
  'data-dir': { type: 'string', description: "the agent's identity: key, certificate, broker CA", default: '.fleetmesh/agent', placeholder: 'DIR' },
  ...LOG_FLAGS,
} as const satisfies Record<string, FlagSpec>;

export type AgentFlagValues = FlagValues<typeof AGENT_FLAGS>;

export const AGENT_COMMAND: CommandSpec<typeof AGENT_FLAGS> = {
  name: 'agent',
  summary: 'Run the agent on this host: enroll with a join token on first run, then keep one outbound stream to the broker.',
  usage: 'fleetmesh agent --broker HOST:7443 --token T --ca-pin sha256:HEX [flags]',
  details: 'The first run enrolls (--broker, --token and --ca-pin are needed); later runs read the identity from --data-dir and need at most --broker.',
  flags: AGENT_FLAGS,
  configFile: true,
};

export interface AgentOptions {
  dataDir: string;
  /** Undefined: use the address remembered at enrollment. */
  brokerAddress: string | undefined;
  token: string | undefined;
  caPin: string | undefined;
  name: string;
  labels: Record<string, string>;
  backoffBaseMs: number;
  backoffCapMs: number;
  sampleIntervalMs: number;
  logLevel: LogLevel;
  logFormat: LogFormat;
}

export function resolveAgentOptions(values: AgentFlagValues): AgentOptions {
  if (values.broker !== undefined) parseHostPort(values.broker, '--broker');
  return {
    dataDir: resolve(values['data-dir']),
    brokerAddress: values.broker,
    token: values.token,
    caPin: values['ca-pin'],
    name: values.name,
    labels: values.labels,
    backoffBaseMs: 500,
    backoffCapMs: 30_000,
    sampleIntervalMs: 5000,
    logLevel: values['log-level'] as LogLevel,
    logFormat: values['log-format'] as LogFormat,
  };
}

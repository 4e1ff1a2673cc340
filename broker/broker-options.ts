import { resolve } from 'node:path';
import type { LogFormat, LogLevel } from '../shared/log/logger.ts';
import type { CommandSpec, FlagSpec, FlagValues } from '../shared/options/command-line.ts';
import { BROKER_DATA_DIR_FLAG, LOG_FLAGS } from '../shared/options/common-flags.ts';
import { parseHostPort } from '../shared/options/values.ts';
import { defaultAdvertiseNames } from './pki/broker-authority.ts';

export const BROKER_FLAGS = {
  ...BROKER_DATA_DIR_FLAG,
  'grpc-listen': { type: 'string', description: 'where agents connect (gRPC, mutual TLS)', default: '0.0.0.0:7443', placeholder: 'HOST:PORT' },
  'advertise-names': {
    type: 'list',
    description: 'host names and addresses agents dial; all go into the server certificate with localhost',
    default: defaultAdvertiseNames(),
    placeholder: 'NAME,…',
  },
  'heartbeat-interval': { type: 'duration', description: 'how often agents send a heartbeat', default: '5s', min: 100, placeholder: 'DURATION' },
  'cert-lifetime': {
    type: 'duration',
    description: 'lifetime of agent certificates (renewed over the stream)',
    default: '30d',
    min: 1000,
    placeholder: 'DURATION',
  },
  ...LOG_FLAGS,
} as const satisfies Record<string, FlagSpec>;

export type BrokerFlagValues = FlagValues<typeof BROKER_FLAGS>;

export const BROKER_COMMAND: CommandSpec<typeof BROKER_FLAGS> = {
  name: 'broker',
  summary: 'Run the broker: agents connect to it over gRPC with mutual TLS; MCP clients talk only to it.',
  usage: 'fleetmesh broker [flags]',
  flags: BROKER_FLAGS,
  configFile: true,
};

/** Everything the broker needs, resolved once; nothing downstream has a default of its own. */
export interface BrokerOptions {
  dataDir: string;
  grpcListen: string;
  advertiseNames: string[];
  heartbeatIntervalMs: number;
  certLifetimeMs: number;
  /** Heartbeats missed before a connected agent is stale. */
  staleAfterMissed: number;
  storePollMs: number;
  logLevel: LogLevel;
  logFormat: LogFormat;
}

export function resolveBrokerOptions(values: BrokerFlagValues): BrokerOptions {
  parseHostPort(values['grpc-listen'], '--grpc-listen');
  return {
    dataDir: resolve(values['data-dir']),
    grpcListen: values['grpc-listen'],
    advertiseNames: values['advertise-names'],
    heartbeatIntervalMs: values['heartbeat-interval'],
    certLifetimeMs: values['cert-lifetime'],
    staleAfterMissed: 3,
    storePollMs: 250,
    logLevel: values['log-level'] as LogLevel,
    logFormat: values['log-format'] as LogFormat,
  };
}

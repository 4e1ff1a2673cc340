import { existsSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_BACKUP_FOLDER } from '../shared/domains/backup/backup-head.ts';
import type { DomainHead } from '../shared/domains/domain.ts';
import { DOMAIN_FLAGS, DOMAIN_HEADS, type DomainFlagValues } from '../shared/domains/domain-heads.ts';
import { DEFAULT_HOST_PROC } from '../shared/domains/system/system-head.ts';
import { FleetError } from '../shared/errors/fleet-error.ts';
import type { LogFormat, LogLevel } from '../shared/log/logger.ts';
import type { CommandSpec, FlagSpec, FlagValues } from '../shared/options/command-line.ts';
import { LOG_FLAGS } from '../shared/options/common-flags.ts';
import { readSecretFile } from '../shared/options/secret-file.ts';
import { parseHostPort } from '../shared/options/values.ts';
import { RECONNECT_BACKOFF } from './connection/backoff.ts';
import { parseBrokerAddresses } from './connection/broker-addresses.ts';

export const AGENT_FLAGS = {
  broker: {
    type: 'string',
    description: 'the broker to dial, or several brokers of a cluster (tried in turn); remembered after enrollment',
    placeholder: 'HOST:PORT[,…]',
  },
  token: { type: 'string', description: 'join token from fleetmesh token create (first run, or to re-enroll after expiry)', placeholder: 'TOKEN' },
  'token-file': { type: 'string', description: 'read --token from this file (a mounted Docker or Kubernetes secret)', placeholder: 'FILE' },
  'ca-pin': { type: 'string', description: 'the broker CA pin printed with the token', placeholder: 'sha256:HEX' },
  'ca-pin-file': { type: 'string', description: 'read --ca-pin from this file', placeholder: 'FILE' },
  name: { type: 'string', description: 'the name this host has in the fleet', default: hostname(), placeholder: 'NAME' },
  'name-file': {
    type: 'string',
    description: "read --name from this file, such as the host's /etc/hostname mounted into a container",
    placeholder: 'FILE',
  },
  labels: { type: 'labels', description: 'labels for selectors, such as role=db,env=prod', default: {}, placeholder: 'K=V,…' },
  'data-dir': { type: 'string', description: "the agent's identity: key, certificate, broker CA", default: '.fleetmesh/agent', placeholder: 'DIR' },
  ...DOMAIN_FLAGS,
  'health-listen': {
    type: 'string',
    description: 'serve /healthz and /readyz (200 while connected to the broker, else 503) here, for probes; off when unset',
    placeholder: 'HOST:PORT',
  },
  ...LOG_FLAGS,
} as const satisfies Record<string, FlagSpec>;

type AgentFlagValues = FlagValues<typeof AGENT_FLAGS>;

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
  /** The --config file the options were read from, if any (config_validate checks it again). */
  configPath?: string | undefined;
  /** Undefined: use the address remembered at enrollment. */
  brokerAddress: string | undefined;
  token: string | undefined;
  caPin: string | undefined;
  name: string;
  labels: Record<string, string>;
  /** Where the Docker engine is: a socket path, unix://… or tcp://…. */
  dockerAddress: string;
  /** How often running containers are sampled for the broker's metrics history (default a minute). */
  containerSampleIntervalMs?: number;
  /** How often a collector reports a shared object it manages besides after each change (default 15 s); tests shorten it. */
  snapshotIntervalMs?: number;
  alertThresholds: { cpu: number; memory: number; disk: number };
  /** network_scan asks the system's resolver for device names (default true). */
  scanReverseDns?: boolean;
  /** The host's /proc mounted into the agent's container; undefined: the agent's own /proc is the host's. */
  hostProc?: string | undefined;
  /** Where volume archives are kept (default `backups` in dataDir, which is also what an agent built without options uses). */
  backupDir?: string | undefined;
  /** A site's own app definitions for install_app, besides the built-in catalog. */
  appCatalogDir?: string | undefined;
  /** The domains' flags as given (a collector reads its own here; the declared default stands for one not given). */
  domainFlags?: Partial<DomainFlagValues>;
  /** What each domain that resolves its flags (`Domain.agentOptions`) made of them, by domain; resolved from the flags when absent. */
  domainOptions?: Readonly<Record<string, unknown>>;
  backoffBaseMs: number;
  backoffCapMs: number;
  sampleIntervalMs: number;
  /** Where the health endpoint listens; undefined: no endpoint. */
  healthListen: string | undefined;
  logLevel: LogLevel;
  logFormat: LogFormat;
}

/** The Docker engine address when nothing names one. */
const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

/**
 * The host's /proc to read, checked now so a wrong path stops the agent at
 * start: a proc tree has `1/stat`.
 */
function resolveHostProc(flag: string | undefined): string | undefined {
  if (flag === undefined) return existsSync(join(DEFAULT_HOST_PROC, '1', 'stat')) ? DEFAULT_HOST_PROC : undefined;
  const dir = resolve(flag);
  if (!existsSync(join(dir, '1', 'stat'))) {
    throw new FleetError('invalid_argument', `--host-proc ${flag} is not a proc filesystem (it has no 1/stat)`, {
      hint: "Mount the host's /proc read-only into the agent's container (-v /proc:/host/proc:ro) and point --host-proc at it.",
    });
  }
  return dir;
}

/** The site's app catalog folder, checked now so a wrong path stops the agent at start. */
function resolveAppCatalog(flag: string | undefined): string | undefined {
  if (flag === undefined) return undefined;
  const dir = resolve(flag);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new FleetError('invalid_argument', `--app-catalog ${flag} is not a directory`, {
      hint: 'Point it at a folder of app definitions, one YAML or JSON file per app.',
    });
  }
  return dir;
}

/** `dockerHost` is the DOCKER_HOST of the environment, the engine's own convention. */
export function resolveAgentOptions(values: AgentFlagValues, dockerHost?: string): AgentOptions {
  if (values.broker !== undefined) parseBrokerAddresses(values.broker);
  if (values['health-listen'] !== undefined) parseHostPort(values['health-listen'], '--health-listen');
  return {
    dataDir: resolve(values['data-dir']),
    brokerAddress: values.broker,
    token: fromFlagOrFile(values.token, values['token-file'], 'token'),
    caPin: fromFlagOrFile(values['ca-pin'], values['ca-pin-file'], 'ca-pin'),
    name: fromFlagOrFile(values.name, values['name-file'], 'name', { fileWins: true }) as string,
    labels: values.labels,
    dockerAddress: values['docker-socket'] ?? (dockerHost || DEFAULT_DOCKER_SOCKET),
    alertThresholds: { cpu: values['alert-cpu'], memory: values['alert-memory'], disk: values['alert-disk'] },
    hostProc: resolveHostProc(values['host-proc']),
    backupDir: resolve(values['backup-dir'] ?? join(values['data-dir'], DEFAULT_BACKUP_FOLDER)),
    appCatalogDir: resolveAppCatalog(values['app-catalog']),
    scanReverseDns: values['scan-reverse-dns'],
    domainFlags: Object.fromEntries(Object.keys(DOMAIN_FLAGS).map((flag) => [flag, values[flag as keyof DomainFlagValues]])),
    domainOptions: Object.fromEntries(DOMAIN_HEADS.flatMap((domain: DomainHead) => (domain.agentOptions ? [[domain.name, domain.agentOptions(values)]] : []))),
    backoffBaseMs: RECONNECT_BACKOFF.baseMs,
    backoffCapMs: RECONNECT_BACKOFF.capMs,
    sampleIntervalMs: 5000,
    healthListen: values['health-listen'],
    logLevel: values['log-level'] as LogLevel,
    logFormat: values['log-format'] as LogFormat,
  };
}

/**
 * A value given directly (`--token`) or as a file (`--token-file`), never both.
 * `fileWins`: the direct flag has a default (the host name), so a file given
 * explicitly replaces it instead of conflicting with it.
 */
function fromFlagOrFile(direct: string | undefined, file: string | undefined, flag: string, options: { fileWins?: boolean } = {}): string | undefined {
  if (file === undefined) return direct;
  if (direct !== undefined && !options.fileWins) {
    throw new FleetError('invalid_argument', `--${flag} and --${flag}-file cannot be combined`, { hint: `Give the ${flag} one way only.` });
  }
  return readSecretFile(file, `--${flag}-file`);
}

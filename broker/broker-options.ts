import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Level } from '../shared/catalog/action.ts';
import { DOMAIN_BROKER_FLAGS } from '../shared/domains/domains.ts';
import { FleetError } from '../shared/errors/fleet-error.ts';
import type { LogFormat, LogLevel } from '../shared/log/logger.ts';
import type { CommandSpec, FlagSpec, FlagValues } from '../shared/options/command-line.ts';
import { BROKER_DATA_DIR_FLAG, LOG_FLAGS } from '../shared/options/common-flags.ts';
import { readSecretFile } from '../shared/options/secret-file.ts';
import { parseHostPort } from '../shared/options/values.ts';
import { parseToolGlobs, ToolFilter, ToolGlobSet } from './auth/tool-filter.ts';
import { type BrokerBootstrap, NO_BOOTSTRAP, readBrokerBootstrap } from './bootstrap/broker-bootstrap.ts';
import type { ApprovalRule } from './calls/approvals/approval-rule.ts';
import type { ClusterOptions } from './cluster/broker-cluster.ts';
import { parseBusUrl } from './cluster/bus.ts';
import type { AdmissionLimits } from './grpc/admission-gate.ts';
import type { AdmissionRate } from './grpc/admission-pacer.ts';
import type { HttpLimits } from './http/listen-http.ts';
import type { RateLimit } from './limits/rate-limiter.ts';
import type { McpSessionLimits } from './mcp/http/legacy-endpoint.ts';
import { STILL_RUNNING_PROGRESS_MS } from './mcp/request-progress.ts';
import type { SurfaceName } from './mcp/surfaces/surface.ts';
import type { TextFormat } from './mcp/tool-result.ts';
import { OAUTH_FLAGS, OAUTH_OFF, type OAuthOptions, resolveOAuthOptions } from './oauth/oauth-options.ts';
import { defaultAdvertiseNames } from './pki/broker-authority.ts';
import { type BrokerServiceOptions, resolveServiceOptions } from './services/broker-services.ts';
import { parseStoreLocation } from './store/store-location.ts';
import { defaultWebAssetsDir } from './web/static-assets.ts';

/** A busy MCP client keeps a few connections (its notification stream and a pool for requests): room for dozens per address. */
const DEFAULT_HTTP_CONNECTIONS_PER_SOURCE = 256;
/**
 * 2025-era MCP sessions per identity on one broker: a client holds one, a
 * team sharing a token or a script opening one per run a few dozen; each
 * costs about 50 KiB and a share of every change notification, so one token
 * cannot hold thousands. A session unused for 10 minutes with no stream open
 * ends (its client opens a new one on the 404 it then gets).
 */
const DEFAULT_MCP_SESSIONS_PER_IDENTITY = 64;
const MCP_SESSION_IDLE_MS = 10 * 60_000;
/**
 * How long a stopping broker lets the MCP calls it took run before it cancels
 * them, each caller then told that its call's outcome is unknown: not the
 * longest call deadline (60 s), since an orchestrator's stop grace is often 30 s.
 */
const STOP_GRACE_MS = 25_000;

export const BROKER_FLAGS = {
  ...BROKER_DATA_DIR_FLAG,
  'grpc-listen': { type: 'string', description: 'where agents connect (gRPC, mutual TLS)', default: '0.0.0.0:7443', placeholder: 'HOST:PORT' },
  'advertise-names': {
    type: 'list',
    description: 'host names and addresses agents dial; all go into the server certificate with localhost',
    default: defaultAdvertiseNames(),
    placeholder: 'NAME,…',
  },
  'mcp-listen': { type: 'string', description: 'where MCP clients connect (Streamable HTTP, path /mcp)', default: '127.0.0.1:7400', placeholder: 'HOST:PORT' },
  'web-listen': {
    type: 'string',
    description: 'where the web console listens (HTTP; sign in with an identity token); off unless given',
    placeholder: 'HOST:PORT',
  },
  'web-allowed-hosts': {
    type: 'list',
    description: 'Host headers the web console accepts (default: localhost, 127.0.0.1 and [::1] with the port); * for any',
    default: [],
    placeholder: 'HOST:PORT,…',
  },
  'tool-surface': {
    type: 'string',
    description: 'how the catalog appears as tools: one per action, one per domain, or find/execute',
    default: 'individual',
    choices: ['individual', 'meta', 'dynamic'],
    placeholder: 'SURFACE',
  },
  'operations-level': {
    type: 'integer',
    description: 'the highest level any identity may use: 0 read-only, 1 operational, 2 configuration, 3 impactful',
    default: 1,
    min: 0,
    max: 3,
    placeholder: 'LEVEL',
  },
  'disable-tools': {
    type: 'list',
    description: 'tools switched off for everyone: globs over tool names and action ids (docker_stop, docker.*, *_delete)',
    default: [],
    placeholder: 'GLOB,…',
  },
  'enable-tools': {
    type: 'list',
    description: 'when given, the only tools offered (globs over tool names and action ids); --disable-tools still applies',
    default: [],
    placeholder: 'GLOB,…',
  },
  'text-format': {
    type: 'string',
    description: 'the text of tool results (structuredContent is always complete)',
    default: 'markdown',
    choices: ['markdown', 'json'],
    placeholder: 'FORMAT',
  },
  'mcp-allowed-hosts': {
    type: 'list',
    description: 'Host headers MCP accepts (default: localhost, 127.0.0.1 and [::1] with the port); * for any',
    default: [],
    placeholder: 'HOST:PORT,…',
  },
  'mcp-allowed-origins': {
    type: 'list',
    description: 'Origin headers MCP accepts from browsers (default: the loopback origins)',
    default: [],
    placeholder: 'ORIGIN,…',
  },
  'mutations-match-agent-labels': {
    type: 'boolean',
    description: 'let selectors of write and destructive tools match labels agents declare themselves (default: only join-token labels)',
    default: false,
  },
  'mcp-task-ttl': {
    type: 'duration',
    description: 'how long an MCP task (a long call a client runs in the background) and its result are kept once it ended',
    default: '1h',
    min: 1000,
    placeholder: 'DURATION',
  },
  'mcp-sessions-per-identity': {
    type: 'integer',
    description: 'MCP sessions (2025-era clients) one identity may hold open at once on this broker; past it a new one is refused with 429',
    default: DEFAULT_MCP_SESSIONS_PER_IDENTITY,
    min: 1,
    placeholder: 'N',
  },
  'http-connections-per-source': {
    type: 'integer',
    description:
      'HTTP connections one address may hold open at once, on the MCP port and on the web console port (raise it behind a reverse proxy, whose address all clients share)',
    default: DEFAULT_HTTP_CONNECTIONS_PER_SOURCE,
    min: 1,
    placeholder: 'N',
  },
  'mcp-public-url': {
    type: 'string',
    description: 'the URL clients use for /mcp, when behind a proxy (for the protected resource metadata)',
    placeholder: 'URL',
  },
  'metrics-token-file': {
    type: 'string',
    description: 'a file holding the bearer token /metrics requires (scrapers send Authorization: Bearer …); without it /metrics needs none',
    placeholder: 'FILE',
  },
  bus: {
    type: 'string',
    description:
      'the NATS bus of a broker cluster (nats://[user:password@|token@]HOST:4222, or tls://… for NATS over TLS); brokers sharing a store and a bus serve one fleet',
    placeholder: 'URL',
  },
  'bus-token-file': { type: 'string', description: 'a file holding the token NATS asks for (instead of one in the --bus URL)', placeholder: 'FILE' },
  'bus-nkey-file': { type: 'string', description: 'a file holding the nkey user seed (SU…) NATS knows the brokers by', placeholder: 'FILE' },
  'bus-ca-file': { type: 'string', description: "the CA certificate NATS's TLS certificate is checked against (with tls://)", placeholder: 'FILE' },
  'bus-cert-file': {
    type: 'string',
    description: 'a client certificate for NATS over TLS, when NATS checks clients by certificate (with --bus-key-file)',
    placeholder: 'FILE',
  },
  'bus-key-file': { type: 'string', description: 'the private key of --bus-cert-file', placeholder: 'FILE' },
  'bus-insecure': {
    type: 'boolean',
    description:
      'start on a bus that lets in clients without credentials (refused otherwise): anyone reaching NATS then reads what brokers say in clear and can flood it',
    default: false,
  },
  'broker-id': {
    type: 'string',
    description: "this broker's name in the cluster (default: the host name and a random suffix, new at each start)",
    placeholder: 'NAME',
  },
  'cluster-address': {
    type: 'string',
    description:
      'where agents reach this broker in particular (HOST:PORT, a name its certificate carries); said to the other brokers of the cluster, which send agents here to even out the load (default: none, and only agents that dial it come)',
    placeholder: 'HOST:PORT',
  },
  'heartbeat-interval': { type: 'duration', description: 'how often agents send a heartbeat', default: '5s', min: 100, placeholder: 'DURATION' },
  'agent-cert-ttl': {
    type: 'duration',
    description: 'lifetime of agent certificates; agents renew theirs over the stream between half and two thirds of it',
    default: '30d',
    min: 1000,
    placeholder: 'DURATION',
  },
  'server-cert-ttl': {
    type: 'duration',
    description: "lifetime of the broker's serving certificate; renewed while running between half and two thirds of it",
    default: '90d',
    min: 1000,
    placeholder: 'DURATION',
  },
  'approval-level': {
    type: 'integer',
    description: "calls of this level and above wait for another identity's approval (fleetmesh approvals, the console's approvals page); off unless given",
    min: 0,
    max: 3,
    placeholder: 'LEVEL',
  },
  'approval-tools': {
    type: 'list',
    description: "calls of these tools wait for another identity's approval too (globs over tool names and action ids)",
    default: [],
    placeholder: 'GLOB,…',
  },
  'approval-ttl': {
    type: 'duration',
    description: 'how long a call waits for its approval before it ends as expired',
    default: '15m',
    min: 1000,
    placeholder: 'DURATION',
  },
  ...OAUTH_FLAGS,
  ...DOMAIN_BROKER_FLAGS,
  ...LOG_FLAGS,
} as const satisfies Record<string, FlagSpec>;

/**
 * Material made beforehand by `fleetmesh bootstrap`, mounted as files (Docker
 * and Kubernetes secrets). `fleetmesh up` keeps its own admin token and does
 * not take these.
 */
const BROKER_BOOTSTRAP_FLAGS = {
  'ca-cert-file': { type: 'string', description: 'use this CA certificate instead of creating one in the data dir (with --ca-key-file)', placeholder: 'FILE' },
  'ca-key-file': { type: 'string', description: 'the private key of --ca-cert-file', placeholder: 'FILE' },
  'ca-key-secret-file': {
    type: 'string',
    description:
      'a file holding the secret the fleet CA key is sealed with in the store; brokers given it may sign (in a cluster, one at a time), others never hold the key',
    placeholder: 'FILE',
  },
  'ca-key-secret': {
    type: 'string',
    description: 'the same secret as --ca-key-secret-file, from the environment (FLEETMESH_CA_KEY_SECRET) rather than a file',
    placeholder: 'SECRET',
  },
  'join-token-file': { type: 'string', description: 'a reusable join token (fm1.…) to accept, registered at start', placeholder: 'FILE' },
  'admin-token-file': { type: 'string', description: 'a bearer token (fmc1.…) registered at start as identity admin, level 3', placeholder: 'FILE' },
} as const satisfies Record<string, FlagSpec>;

type BrokerFlagValues = FlagValues<typeof BROKER_FLAGS> & Partial<FlagValues<typeof BROKER_BOOTSTRAP_FLAGS>>;

export const BROKER_COMMAND: CommandSpec<typeof BROKER_FLAGS & typeof BROKER_BOOTSTRAP_FLAGS> = {
  name: 'broker',
  summary: 'Run the broker: agents connect to it over gRPC with mutual TLS; MCP clients talk only to it.',
  usage: 'fleetmesh broker [flags]',
  details:
    'fleetmesh bootstrap makes the CA, join token and admin token files that --ca-cert-file, --ca-key-file, --join-token-file and --admin-token-file take.',
  flags: { ...BROKER_FLAGS, ...BROKER_BOOTSTRAP_FLAGS },
  configFile: true,
};

/**
 * A source address may enroll 30 agents at once and 30 a minute after that (a
 * rack behind one NAT); one join token 200 at once and 120 a minute (a
 * DaemonSet's rollout). An agent refused for the rate is told when to retry.
 */
const DEFAULT_ENROLL_LIMITS = { perSource: { burst: 30, perMinute: 30 }, perToken: { burst: 200, perMinute: 120 } } as const;
/**
 * Agent streams taken on: 100 at once, 200 a second after that (an mTLS
 * handshake and a Hello cost the broker about 3 ms of CPU, so a restarted
 * broker spends at most about two thirds of a core on a returning fleet, and
 * 2,000 agents are back within about 10 s).
 */
const DEFAULT_ADMISSION_RATE: AdmissionRate = { burst: 100, perSecond: 200 };
/**
 * The agents' port before a connection's first call: 6,000 connections
 * pending in all (30 s of turns at the default rate, as many descriptors at
 * most), 2,048 of one source address (a site behind one NAT, or the
 * benchmarks' 2,000 simulated agents in one process, back at once after a
 * restart; agents past it retry after their backoff). A hello within 5 s (an
 * agent sends it at once) and a first call within 15 s of the turn (a TLS
 * handshake and the call's headers on a busy broker). A source that leaves
 * more than 100 connections unfinished, then 1 a second, holds 8 at once
 * until its allowance refills: a bare-connect flood slows itself, no one else.
 * At most 512 handshakes at once: 2.5 s of turns at the default rate. A
 * handshake takes several turns of the broker's loop, and a loop busy with
 * 10,000 agents has turns of a second or more: handshakes of 7 s each, 100 of
 * them in flight, were seen there, and a cap of 128 would hold such a broker
 * to 18 a second where its CPU allowed more.
 */
const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = {
  pendingPerSource: 2048,
  pendingPerSlowedSource: 8,
  pendingTotal: 6000,
  unfinishedPerSource: { burst: 100, perMinute: 60 },
  helloTimeoutMs: 5000,
  handshakeTimeoutMs: 15_000,
  handshakesAtOnce: 512,
};
/**
 * Each HTTP listener (MCP, the web console) holds at most 2,048 connections,
 * or --http-connections-per-source when that is more. Headers must arrive
 * within 10 s of a request's first byte, a body within 30 s (4 MiB at about
 * 1 Mbit/s), a whole request within 60 s (Node's own backstop).
 */
function httpLimits(perSource: number): HttpLimits {
  return {
    maxConnections: Math.max(2048, perSource),
    maxConnectionsPerSource: perSource,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 60_000,
    bodyTimeoutMs: 30_000,
  };
}
/** Refusals audited per identity or source: 20 at once, 10 a minute sustained. */
const DEFAULT_REFUSAL_AUDIT_LIMIT: RateLimit = { burst: 20, perMinute: 10 };

/** Everything the broker needs, resolved once; nothing downstream has a default of its own. */
export interface BrokerOptions {
  dataDir: string;
  /** `--store`: undefined for the SQLite file in the data dir. */
  store: string | undefined;
  grpcListen: string;
  mcpListen: string;
  toolSurface: SurfaceName;
  operationsLevel: Level;
  /** The tools switched off for everyone (`--disable-tools`, `--enable-tools`). */
  tools: ToolFilter;
  /** Which calls wait for a second identity's approval, and for how long; undefined when none do. */
  approvals: ApprovalRule | undefined;
  /** How MCP clients may sign in besides identity tokens. */
  oauth: OAuthOptions;
  textFormat: TextFormat;
  mcpAllowedHosts: string[];
  mcpAllowedOrigins: string[];
  mcpPublicUrl: string | undefined;
  /** Connections and request clocks of the MCP and web console listeners. */
  httpLimits: HttpLimits;
  /** 2025-era MCP sessions per identity, and how long one may go unused. */
  mcpSessionLimits: McpSessionLimits;
  /** How long MCP tasks and their results are kept. */
  mcpTaskTtlMs: number;
  /** How long a stopping broker lets the MCP calls it took run before it cancels them (their outcome unknown). */
  stopGraceMs: number;
  /** A call silent this long sends a progress notification saying it still runs, to a caller that asked for progress. */
  stillRunningProgressMs: number;
  /** `--web-listen`: where the web console listens, or undefined for no console. */
  webListen: string | undefined;
  webAllowedHosts: string[];
  /** The built console and widget files (`npm run build` puts them in dist/web). */
  webAssetsDir: string;
  advertiseNames: string[];
  /** Selectors of mutations also match labels agents declare (docs/claims.md); otherwise only the operator's. */
  mutationsMatchAgentLabels: boolean;
  /** CA and tokens the operator supplied; all undefined when the broker makes its own. */
  bootstrap: BrokerBootstrap;
  /** The bearer token /metrics requires, or undefined for none. */
  metricsToken: string | undefined;
  /** The cluster this broker is part of, or undefined for a broker on its own. */
  cluster: ClusterOptions | undefined;
  /** Enroll attempts allowed per source address and per join token id, before anyone is authenticated. */
  enrollLimits: { perSource: RateLimit; perToken: RateLimit };
  /** Refused calls and bearer tokens written to the audit per identity or source address; past it, one summary row. */
  refusalAuditLimit: RateLimit;
  heartbeatIntervalMs: number;
  /** Lifetime of agent certificates. */
  agentCertTtlMs: number;
  /** Lifetime of the broker's serving certificate. */
  serverCertTtlMs: number;
  /** The secret the CA key is sealed with in the store (`--ca-key-secret-file`, FLEETMESH_CA_KEY_SECRET); undefined: this broker signs only with a key it holds otherwise. */
  caKeySecret: string | undefined;
  /** Heartbeats missed before a connected agent is stale. */
  staleAfterMissed: number;
  /** Heartbeats missed before the broker ends a silent agent's stream and the agent is offline (the grace after stale). */
  offlineAfterMissed: number;
  /** How fast agent connections are handed to TLS; the excess waits for its turn, the sources taking turns. */
  admissionRate: AdmissionRate;
  /** What one source address, and all together, may hold of the agents' port before a connection's first call. */
  admissionLimits: AdmissionLimits;
  storePollMs: number;
  /** The options of the services the broker runs for its domains (notification channels, wake targets), by service name. */
  services: BrokerServiceOptions;
  logLevel: LogLevel;
  logFormat: LogFormat;
}

/**
 * A broker started in-process (tests, benchmarks, the conformance run): both
 * listeners on loopback ports the system picks, its own CA, quiet logs.
 */
export function inProcessBrokerOptions(dataDir: string, overrides: Partial<BrokerOptions> = {}): BrokerOptions {
  return {
    dataDir,
    store: undefined,
    grpcListen: '127.0.0.1:0',
    mcpListen: '127.0.0.1:0',
    toolSurface: 'individual',
    operationsLevel: 1,
    tools: ToolFilter.NONE,
    approvals: undefined,
    oauth: OAUTH_OFF,
    textFormat: 'markdown',
    mcpAllowedHosts: [],
    mcpAllowedOrigins: [],
    mcpPublicUrl: undefined,
    httpLimits: httpLimits(DEFAULT_HTTP_CONNECTIONS_PER_SOURCE),
    mcpSessionLimits: { perIdentity: DEFAULT_MCP_SESSIONS_PER_IDENTITY, idleMs: MCP_SESSION_IDLE_MS },
    mcpTaskTtlMs: 3_600_000,
    stopGraceMs: STOP_GRACE_MS,
    stillRunningProgressMs: STILL_RUNNING_PROGRESS_MS,
    webListen: undefined,
    webAllowedHosts: [],
    webAssetsDir: defaultWebAssetsDir(),
    advertiseNames: ['localhost'],
    mutationsMatchAgentLabels: false,
    bootstrap: NO_BOOTSTRAP,
    metricsToken: undefined,
    cluster: undefined,
    enrollLimits: DEFAULT_ENROLL_LIMITS,
    refusalAuditLimit: DEFAULT_REFUSAL_AUDIT_LIMIT,
    heartbeatIntervalMs: 5000,
    agentCertTtlMs: 30 * 86_400_000,
    serverCertTtlMs: 90 * 86_400_000,
    caKeySecret: undefined,
    staleAfterMissed: 3,
    offlineAfterMissed: 6,
    admissionRate: DEFAULT_ADMISSION_RATE,
    admissionLimits: DEFAULT_ADMISSION_LIMITS,
    storePollMs: 250,
    services: {},
    logLevel: 'error',
    logFormat: 'text',
    ...overrides,
  };
}

/** Brokers beat once a second; one silent for 10 s has left the cluster (broker-cluster.ts). */
const CLUSTER_BEAT_MS = 1000;

/** A NATS subject token: letters, digits, `-` and `_` only. */
function clusterBrokerId(given: string | undefined): string {
  if (given !== undefined) {
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(given)) {
      throw new FleetError('invalid_argument', `--broker-id ${JSON.stringify(given)} may hold only letters, digits, - and _`, {
        hint: 'For example --broker-id broker-1.',
      });
    }
    return given;
  }
  return `${hostname()
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(0, 60)}-${randomBytes(3).toString('hex')}`;
}

/** The CA key secret, from its file or the environment; both at once is refused as ambiguous. */
function resolveCaKeySecret(values: BrokerFlagValues): string | undefined {
  const file = values['ca-key-secret-file'];
  const direct = values['ca-key-secret'];
  if (file !== undefined && direct !== undefined) {
    throw new FleetError('invalid_argument', '--ca-key-secret-file and --ca-key-secret (FLEETMESH_CA_KEY_SECRET) are both set', {
      hint: 'Give the secret one way.',
    });
  }
  const secret = file !== undefined ? readSecretFile(file, '--ca-key-secret-file') : direct?.trim();
  if (secret !== undefined && secret.length < 16) {
    throw new FleetError('invalid_argument', 'the CA key secret is shorter than 16 characters', { hint: 'Use a long random secret: openssl rand -hex 32.' });
  }
  return secret;
}

/** The PEM texts of the bus's TLS flags, read (and refused when unreadable) before anything starts. */
function resolveBusTls(values: BrokerFlagValues): ClusterOptions['tls'] {
  const cert = values['bus-cert-file'];
  const key = values['bus-key-file'];
  if ((cert === undefined) !== (key === undefined)) {
    throw new FleetError('invalid_argument', `--bus-cert-file and --bus-key-file go together; only ${cert ? '--bus-cert-file' : '--bus-key-file'} is set`, {
      hint: 'Give both, or neither.',
    });
  }
  const ca = values['bus-ca-file'];
  if (ca === undefined && cert === undefined) return undefined;
  return {
    ...(ca !== undefined ? { ca: readSecretFile(ca, '--bus-ca-file') } : {}),
    ...(cert !== undefined && key !== undefined ? { cert: readSecretFile(cert, '--bus-cert-file'), key: readSecretFile(key, '--bus-key-file') } : {}),
  };
}

export function resolveBrokerOptions(values: BrokerFlagValues): BrokerOptions {
  parseHostPort(values['grpc-listen'], '--grpc-listen');
  if (values.bus !== undefined) parseBusUrl(values.bus);
  if (values['cluster-address'] !== undefined) parseHostPort(values['cluster-address'], '--cluster-address');
  parseHostPort(values['mcp-listen'], '--mcp-listen');
  const webListen = values['web-listen'] === 'off' ? undefined : values['web-listen'];
  if (webListen !== undefined) parseHostPort(webListen, '--web-listen');
  const dataDir = resolve(values['data-dir']);
  // Checked now, so a mistyped --store stops the broker before anything starts.
  parseStoreLocation(values.store, dataDir);
  return {
    dataDir,
    store: values.store,
    grpcListen: values['grpc-listen'],
    mcpListen: values['mcp-listen'],
    toolSurface: values['tool-surface'] as SurfaceName,
    operationsLevel: values['operations-level'] as Level,
    tools: new ToolFilter({
      disable: parseToolGlobs(values['disable-tools'], '--disable-tools'),
      enable: parseToolGlobs(values['enable-tools'], '--enable-tools'),
    }),
    approvals:
      values['approval-level'] === undefined && values['approval-tools'].length === 0
        ? undefined
        : {
            level: values['approval-level'] as Level | undefined,
            tools: new ToolGlobSet(parseToolGlobs(values['approval-tools'], '--approval-tools')),
            ttlMs: values['approval-ttl'],
          },
    oauth: resolveOAuthOptions(values, webListen !== undefined),
    textFormat: values['text-format'] as TextFormat,
    mcpAllowedHosts: values['mcp-allowed-hosts'],
    mcpAllowedOrigins: values['mcp-allowed-origins'],
    mcpPublicUrl: values['mcp-public-url'],
    httpLimits: httpLimits(values['http-connections-per-source']),
    mcpSessionLimits: { perIdentity: values['mcp-sessions-per-identity'], idleMs: MCP_SESSION_IDLE_MS },
    mcpTaskTtlMs: values['mcp-task-ttl'],
    stopGraceMs: STOP_GRACE_MS,
    stillRunningProgressMs: STILL_RUNNING_PROGRESS_MS,
    webListen,
    webAllowedHosts: values['web-allowed-hosts'],
    webAssetsDir: defaultWebAssetsDir(),
    advertiseNames: values['advertise-names'],
    mutationsMatchAgentLabels: values['mutations-match-agent-labels'],
    bootstrap: readBrokerBootstrap(
      {
        caCertFile: values['ca-cert-file'],
        caKeyFile: values['ca-key-file'],
        joinTokenFile: values['join-token-file'],
        adminTokenFile: values['admin-token-file'],
      },
      { sharedStore: parseStoreLocation(values.store, dataDir).engine === 'postgres' },
    ),
    metricsToken: values['metrics-token-file'] === undefined ? undefined : readSecretFile(values['metrics-token-file'], '--metrics-token-file'),
    cluster:
      values.bus === undefined
        ? undefined
        : {
            url: values.bus,
            token: values['bus-token-file'] === undefined ? undefined : readSecretFile(values['bus-token-file'], '--bus-token-file'),
            nkeySeed: values['bus-nkey-file'] === undefined ? undefined : readSecretFile(values['bus-nkey-file'], '--bus-nkey-file'),
            tls: resolveBusTls(values),
            insecure: values['bus-insecure'],
            brokerId: clusterBrokerId(values['broker-id']),
            beatIntervalMs: CLUSTER_BEAT_MS,
            ...(values['cluster-address'] !== undefined ? { agentAddress: values['cluster-address'] } : {}),
          },
    enrollLimits: DEFAULT_ENROLL_LIMITS,
    refusalAuditLimit: DEFAULT_REFUSAL_AUDIT_LIMIT,
    heartbeatIntervalMs: values['heartbeat-interval'],
    agentCertTtlMs: values['agent-cert-ttl'],
    serverCertTtlMs: values['server-cert-ttl'],
    caKeySecret: resolveCaKeySecret(values),
    staleAfterMissed: 3,
    offlineAfterMissed: 6,
    admissionRate: DEFAULT_ADMISSION_RATE,
    admissionLimits: DEFAULT_ADMISSION_LIMITS,
    storePollMs: 250,
    services: resolveServiceOptions(values),
    logLevel: values['log-level'] as LogLevel,
    logFormat: values['log-format'] as LogFormat,
  };
}

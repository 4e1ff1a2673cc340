import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { createAgentInfoHandler } from '../../agent/actions/agent-info.ts';
import { type ActionHandler, Dispatcher, type ResultSink } from '../../agent/dispatcher/dispatcher.ts';
import { AgentRegistry } from '../../broker/agents/agent-registry.ts';
import { AgentSession, type BrokerFrameStream } from '../../broker/agents/agent-session.ts';
import { FULL_ACCESS, GrantSet } from '../../broker/auth/grants.ts';
import { createIdentity, type Identity } from '../../broker/auth/identities.ts';
import { ToolFilter } from '../../broker/auth/tool-filter.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { ActionRunner, type RunContext } from '../../broker/calls/action-runner.ts';
import type { ApprovalRule } from '../../broker/calls/approvals/approval-rule.ts';
import { RefusalAudit } from '../../broker/calls/refusal-audit.ts';
import { BROKER_ACTIONS } from '../../broker/domains/broker-domains.ts';
import { FleetIndex } from '../../broker/index/fleet-index.ts';
import type { McpSessionLimits } from '../../broker/mcp/http/legacy-endpoint.ts';
import { McpHttpServer } from '../../broker/mcp/http/mcp-http-server.ts';
import { McpSession, type McpSessionEra } from '../../broker/mcp/mcp-session.ts';
import type { SurfaceName } from '../../broker/mcp/surfaces/surface.ts';
import { SURFACES } from '../../broker/mcp/surfaces/surfaces.ts';
import { McpTasks } from '../../broker/mcp/tasks/mcp-tasks.ts';
import { tellSessions } from '../../broker/mcp/tell-sessions.ts';
import { failedOutcome, type TextFormat, type ToolOutcome } from '../../broker/mcp/tool-result.ts';
import { BrokerMetrics } from '../../broker/metrics/broker-metrics.ts';
import { UsageHistory } from '../../broker/metrics/usage-history.ts';
import { BrokerServices } from '../../broker/services/broker-services.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { WidgetResources } from '../../broker/web/widget-resources.ts';
import type { Action, Level } from '../../shared/catalog/action.ts';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import type { ErrorInfo } from '../../shared/errors/fleet-error.ts';
import { type BrokerFrame, CallErrorSchema, ChunkSchema, ResultSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { type Logger, silentLogger } from '../../shared/log/logger.ts';
import { makeTempDir } from './temp-dir.ts';

/** One action an in-memory host serves, and how it answers. */
export interface LinkedAction {
  action: Action;
  handler: ActionHandler;
}

/**
 * agent.info answered by the agent's own handler (a watch streams its
 * samples), describing a host of this name and these labels whose figures
 * are all unknown.
 */
export function agentInfoOf(name: string, labels: Record<string, string> = {}): LinkedAction {
  const startedAt = Date.now();
  return {
    action: agentInfo,
    handler: createAgentInfoHandler({
      describe: () => ({
        agent_id: `agent-${name}`,
        name,
        version: 'linked',
        protocol_version: 1,
        started_at_unix_ms: startedAt,
        collectors: [],
        labels,
        facts: {},
        certificate_not_after_unix_ms: startedAt + 3_600_000,
      }),
      sample: () => ({
        cpu_percent: null,
        memory_percent: null,
        memory_used_bytes: null,
        memory_total_bytes: null,
        disk_percent: null,
        disk_mount: null,
        load_1: null,
        containers_running: null,
        containers_total: null,
        net_rx_bytes: null,
        net_tx_bytes: null,
        sampled_at_unix_ms: Date.now(),
      }),
    }),
  };
}

export interface LinkedHost {
  id: string;
  name: string;
  dispatcher: Dispatcher;
  session: AgentSession;
  /** Every frame the broker sent down this host's link, in order. */
  sent: BrokerFrame[];
  /** Ends the link as a dropped stream would. */
  disconnect(): void;
  /**
   * Silences the host as a stopped process would: the link stays open, but
   * nothing sent to the host is handled and nothing comes back.
   */
  freeze(): void;
}

/** How an in-memory MCP session is made: a 2025-era one on the individual surface, Markdown text, no icons, unless asked otherwise. */
export interface LinkedSessionOptions {
  era?: McpSessionEra;
  surface?: SurfaceName;
  textFormat?: TextFormat;
  iconOrigin?: string;
  /** How long a call may tell its caller nothing before it says it still runs (default: the broker's). */
  stillRunningProgressMs?: number;
}

/** What an MCP server on the linked fleet may be given; the rest is what a broker started in-process has. */
export interface LinkedServerOptions {
  sessionLimits?: McpSessionLimits;
  routes?: ConstructorParameters<typeof McpHttpServer>[0]['routes'];
  /** How long a stopping server lets the calls it took run before it cancels them (default: the broker's). */
  stopGraceMs?: number;
}

/**
 * A real broker registry and action runner wired to real agent dispatchers
 * through an in-memory link instead of gRPC: the session's frames reach the
 * dispatcher, and the dispatcher's chunks and results reach the session, each
 * on a later turn of the event loop as over a stream. Nothing listens on a
 * port unless a test asks for the MCP server (serveMcp).
 */
export interface LinkedFleet {
  store: BrokerStore;
  registry: AgentRegistry;
  runner: ActionRunner;
  index: FleetIndex;
  /** The MCP tasks of every session made here; the checks they run in the background start with an MCP server (serveMcp). */
  tasks: McpTasks;
  /** A host answering these actions; `log` is its dispatcher's logger (silent unless given). */
  addHost(name: string, actions: readonly LinkedAction[], labels?: Record<string, string>, options?: { log?: Logger }): Promise<LinkedHost>;
  identity(level: Level, grants?: readonly string[], name?: string): Identity;
  /** Runs an action as the MCP edge would (a failure becomes an error result), with no signal of its own unless given. */
  run(identity: Identity, action: Action, args: Record<string, unknown>, context?: Partial<RunContext>): Promise<ToolOutcome>;
  /**
   * An MCP session of `identity` on these broker parts, made as the HTTP edge
   * makes one, and told of fleet changes and task status as the broker tells
   * its sessions; nothing serves it until a client is connected to its server.
   */
  mcpSession(identity: Identity, options?: LinkedSessionOptions): McpSession;
  /**
   * The broker's MCP HTTP server on these parts, listening on a free port of
   * 127.0.0.1 (stopped with the fleet): the whole edge in this process.
   */
  serveMcp(options?: LinkedServerOptions): Promise<McpHttpServer>;
  /** A bearer token of a new identity in this fleet's store. */
  token(level: Level, grants?: string[], name?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startLinkedFleet(
  options: { operationsLevel?: Level; mutationsMatchAgentLabels?: boolean; tools?: ToolFilter; approvals?: ApprovalRule } = {},
): Promise<LinkedFleet> {
  const temp = makeTempDir('fleetmesh-linked-');
  // What a broker started in-process is given, for the MCP server serveMcp() starts.
  const defaults = inProcessBrokerOptions(temp.path);
  const store = await BrokerStore.open(temp.path);
  const log = silentLogger;
  const registry = new AgentRegistry(store, { heartbeatIntervalMs: 60_000, staleAfterMissed: 3, offlineAfterMissed: 6, storePollMs: 60_000 }, log);
  const recorder = new BrokerMetrics();
  const refusals = new RefusalAudit(store, { burst: 1000, perMinute: 1000 });
  const index = new FleetIndex(registry, store, log, recorder);
  const runner = new ActionRunner({
    registry,
    store,
    log,
    operationsLevel: options.operationsLevel ?? 3,
    tools: options.tools ?? ToolFilter.NONE,
    approvals: options.approvals,
    index,
    services: new BrokerServices({}, { registry, index, log }),
    metrics: new UsageHistory(store, registry, log),
    brokerActions: BROKER_ACTIONS,
    recorder,
    refusals,
    mutationsMatchAgentLabels: options.mutationsMatchAgentLabels ?? false,
  });
  const hosts: LinkedHost[] = [];
  const servers: McpHttpServer[] = [];
  let identities = 0;
  // Started by an MCP server that serves them (serveMcp): a session needs none of the checks it runs.
  const tasks = new McpTasks(store, log, 3_600_000, 'markdown');
  const sessions: McpSession[] = [];
  const untell = tellSessions({ registry, index, tasks }, () => sessions);
  // Widgets are listed from their names; their documents are not built here.
  const widgets = new WidgetResources(join(temp.path, 'web-assets'));

  const addHost = async (
    name: string,
    actions: readonly LinkedAction[],
    labels: Record<string, string> = {},
    options: { log?: Logger } = {},
  ): Promise<LinkedHost> => {
    const id = `agent-${name}`;
    await store.agents.insert({ id, name, tokenLabels: labels, publicKeySha256: `key-${name}`, enrolledAt: Date.now(), tokenId: `token-${name}` });
    const dispatcher = new Dispatcher(options.log ?? log);
    for (const { action, handler } of actions) dispatcher.register(action, handler);
    const sent: BrokerFrame[] = [];
    let open = true;
    let frozen = false;
    // The agent's answers, delivered to the session a turn later as a stream would.
    const sink: ResultSink = {
      chunk: (callId, seq, payloadJson) => setImmediate(() => open && !frozen && session.onChunk(create(ChunkSchema, { callId, seq, payloadJson }))),
      result: (callId, payloadJson, failedCollectors, errors: ErrorInfo[]) =>
        setImmediate(
          () =>
            open &&
            !frozen &&
            session.onResult(
              create(ResultSchema, {
                callId,
                payloadJson,
                failedCollectors,
                errors: errors.map((e) => create(CallErrorSchema, { code: e.code, message: e.message, hint: e.hint, collector: e.collector ?? '' })),
              }),
            ),
        ),
    };
    const link: BrokerFrameStream = {
      write(frame) {
        sent.push(frame);
        setImmediate(() => {
          if (!open || frozen) return;
          const body = frame.frame;
          if (body.case === 'call') {
            const call = body.value;
            void dispatcher.run(
              {
                callId: call.callId,
                action: call.action,
                paramsJson: call.paramsJson,
                deadlineUnixMs: Number(call.deadlineUnixMs),
                caller: call.caller,
                callerLevel: call.callerLevel,
              },
              sink,
            );
          } else if (body.case === 'cancel') {
            dispatcher.cancel(body.value.callId, body.value.reason);
          }
        });
        return true;
      },
      end: () => {
        open = false;
        dispatcher.cancelAll('the link ended');
      },
      emit: () => {
        open = false;
        dispatcher.cancelAll('the link failed');
        return true;
      },
    };
    const session = new AgentSession(link, id, `serial-${name}`);
    const collectors = [...new Set(actions.flatMap((a) => (a.action.collector ? [a.action.collector] : [])))];
    await registry.attach(
      session,
      {
        agent_version: 'linked',
        protocol_version: 1,
        actions: dispatcher.actions(),
        collectors: collectors.map((collector) => ({ name: collector, available: true, reason: '' })),
        facts: {},
        started_unix_ms: Date.now(),
      },
      labels,
    );
    const host: LinkedHost = {
      id,
      name,
      dispatcher,
      session,
      sent,
      disconnect: () => {
        open = false;
        dispatcher.cancelAll('the link dropped');
        registry.detach(session, 'the link dropped');
      },
      freeze: () => {
        frozen = true;
      },
    };
    hosts.push(host);
    return host;
  };

  const fleet: LinkedFleet = {
    store,
    registry,
    runner,
    index,
    tasks,
    addHost,
    identity: (level, grants = FULL_ACCESS, name) => ({
      id: `identity-${++identities}`,
      name: name ?? `identity-${identities}`,
      level,
      grants: new GrantSet(grants),
      expiresAt: Date.now() + 3_600_000,
    }),
    run: (identity, action, args, context = {}) =>
      runner.run(identity, action, args, { tool: action.tool, signal: new AbortController().signal, ...context }).catch(failedOutcome),
    mcpSession: (identity, sessionOptions = {}) => {
      const session = new McpSession({
        identity,
        surface: SURFACES[sessionOptions.surface ?? 'individual'],
        textFormat: sessionOptions.textFormat ?? 'markdown',
        runner,
        registry,
        store,
        log,
        era: sessionOptions.era ?? 'legacy',
        tasks,
        widgets,
        iconOrigin: sessionOptions.iconOrigin,
        stillRunningProgressMs: sessionOptions.stillRunningProgressMs ?? defaults.stillRunningProgressMs,
      });
      sessions.push(session);
      return session;
    },
    serveMcp: async (serverOptions = {}) => {
      const server = new McpHttpServer({
        host: '127.0.0.1',
        port: 0,
        allowedHosts: defaults.mcpAllowedHosts,
        allowedOrigins: defaults.mcpAllowedOrigins,
        publicUrl: defaults.mcpPublicUrl,
        httpLimits: defaults.httpLimits,
        sessionLimits: serverOptions.sessionLimits ?? defaults.mcpSessionLimits,
        stopGraceMs: serverOptions.stopGraceMs ?? defaults.stopGraceMs,
        store,
        log,
        refusals,
        tasks,
        createSession: (identity, era, iconOrigin) => fleet.mcpSession(identity, { era, ...(iconOrigin ? { iconOrigin } : {}) }),
        ...(serverOptions.routes ? { routes: serverOptions.routes } : {}),
      });
      await server.start();
      servers.push(server);
      return server;
    },
    token: async (level, grants, name) => (await createIdentity(store, { name: name ?? `linked-${++identities}`, level, ...(grants ? { grants } : {}) })).token,
    async stop() {
      await Promise.all(servers.map((server) => server.stop()));
      untell();
      await tasks.stop();
      for (const host of hosts) if (host.session.isOpen) host.disconnect();
      await registry.stop();
      await store.close();
      temp.remove();
    },
  };
  return fleet;
}

import { create } from '@bufbuild/protobuf';
import { type ActionHandler, Dispatcher, type ResultSink } from '../../agent/dispatcher/dispatcher.ts';
import { AgentRegistry } from '../../broker/agents/agent-registry.ts';
import { AgentSession, type BrokerFrameStream } from '../../broker/agents/agent-session.ts';
import { FULL_ACCESS, GrantSet } from '../../broker/auth/grants.ts';
import type { Identity } from '../../broker/auth/identities.ts';
import { ActionRunner, type RunContext, type RunResult } from '../../broker/calls/action-runner.ts';
import { RefusalAudit } from '../../broker/calls/refusal-audit.ts';
import { BROKER_ACTIONS } from '../../broker/domains/broker-domains.ts';
import { FleetIndex } from '../../broker/index/fleet-index.ts';
import { errorStructure } from '../../broker/mcp/mcp-session.ts';
import { BrokerMetrics } from '../../broker/metrics/broker-metrics.ts';
import { UsageHistory } from '../../broker/metrics/usage-history.ts';
import { BrokerServices } from '../../broker/services/broker-services.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import type { Action, Level } from '../../shared/catalog/action.ts';
import { type ErrorInfo, toFleetError } from '../../shared/errors/fleet-error.ts';
import { type BrokerFrame, CallErrorSchema, ChunkSchema, ResultSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { type Logger, silentLogger } from '../../shared/log/logger.ts';
import { makeTempDir } from './temp-dir.ts';

/** One action an in-memory host serves, and how it answers. */
export interface LinkedAction {
  action: Action;
  handler: ActionHandler;
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

/**
 * A real broker registry and action runner wired to real agent dispatchers
 * through an in-memory link instead of gRPC: the session's frames reach the
 * dispatcher, and the dispatcher's chunks and results reach the session, each
 * on a later turn of the event loop as over a stream. Nothing listens on a port.
 */
/** What the tools/call edge makes of a run: the runner's result, or a failure as an error result. */
export type EdgeResult = Omit<RunResult, 'shape'> & { shape: RunResult['shape'] | 'error' };

export interface LinkedFleet {
  store: BrokerStore;
  registry: AgentRegistry;
  runner: ActionRunner;
  /** A host answering these actions; `log` is its dispatcher's logger (silent unless given). */
  addHost(name: string, actions: readonly LinkedAction[], labels?: Record<string, string>, options?: { log?: Logger }): Promise<LinkedHost>;
  identity(level: Level, grants?: readonly string[], name?: string): Identity;
  /** Runs an action as the MCP edge would (a failure becomes an error result), with no signal of its own unless given. */
  run(identity: Identity, action: Action, args: Record<string, unknown>, context?: Partial<RunContext>): Promise<EdgeResult>;
  stop(): Promise<void>;
}

export async function startLinkedFleet(options: { operationsLevel?: Level; mutationsMatchAgentLabels?: boolean } = {}): Promise<LinkedFleet> {
  const temp = makeTempDir('fleetmesh-linked-');
  const store = await BrokerStore.open(temp.path);
  const log = silentLogger;
  const registry = new AgentRegistry(store, { heartbeatIntervalMs: 60_000, staleAfterMissed: 3, offlineAfterMissed: 6, storePollMs: 60_000 }, log);
  const recorder = new BrokerMetrics();
  const index = new FleetIndex(registry, store, log, recorder);
  const runner = new ActionRunner({
    registry,
    store,
    log,
    operationsLevel: options.operationsLevel ?? 3,
    index,
    services: new BrokerServices({}, { registry, index, log }),
    metrics: new UsageHistory(store, registry, log),
    brokerActions: BROKER_ACTIONS,
    recorder,
    refusals: new RefusalAudit(store, { burst: 1000, perMinute: 1000 }),
    mutationsMatchAgentLabels: options.mutationsMatchAgentLabels ?? false,
  });
  const hosts: LinkedHost[] = [];
  let identities = 0;

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

  return {
    store,
    registry,
    runner,
    addHost,
    identity: (level, grants = FULL_ACCESS, name) => ({
      id: `identity-${++identities}`,
      name: name ?? `identity-${identities}`,
      level,
      grants: new GrantSet(grants),
      expiresAt: Date.now() + 3_600_000,
    }),
    run: async (identity, action, args, context = {}) => {
      try {
        return await runner.run(identity, action, args, { tool: action.tool, signal: new AbortController().signal, ...context });
      } catch (error) {
        return { action, structured: errorStructure(toFleetError(error)), isError: true, shape: 'error' };
      }
    },
    async stop() {
      for (const host of hosts) if (host.session.isOpen) host.disconnect();
      await registry.stop();
      await store.close();
      temp.remove();
    },
  };
}

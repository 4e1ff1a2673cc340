import type { AgentOptions } from '../../agent/agent-options.ts';
import type { Collector } from '../../agent/collectors/collector.ts';
import type { CollectorContext, CollectorPlugin } from '../../agent/collectors/collector-plugin.ts';
import { Dispatcher } from '../../agent/dispatcher/dispatcher.ts';
import type { EngineClient } from '../../agent/engine/engine-client.ts';
import type { SystemSampler } from '../../agent/sampler/system-sampler.ts';
import type { Action, ActionInput, ActionOutput } from '../../shared/catalog/action.ts';
import type { DomainFlagValues } from '../../shared/domains/domains.ts';
import type { ErrorInfo } from '../../shared/errors/fleet-error.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { makeTempDir } from './temp-dir.ts';
import { TEST_AGENT_DEFAULTS } from './test-agent-defaults.ts';

/** One call's answer as the dispatcher sends it to the broker, decoded. */
export interface CallAnswer<A extends Action> {
  payload: ActionOutput<A> | null;
  errors: ErrorInfo[];
  failedCollectors: string[];
  /** What the handler streamed before its answer (progress, followed lines). */
  chunks: unknown[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * One collector made by its plug-in in this process, with a context whose
 * engine is the one a test gives (a FakeEngine's client), and its handlers
 * registered on a real Dispatcher: a call goes through the action's schema,
 * deadline and answer encoding as a broker's would, without a stream. Reports
 * and availability changes are recorded. `stop()` stops the collector and
 * removes its data dir.
 */
export class CollectorCalls<C extends Collector> {
  readonly collector: C;
  readonly reports: { kind: string; payload: unknown }[] = [];
  availabilityChanges = 0;
  readonly options: AgentOptions;
  private readonly dispatcher = new Dispatcher(silentLogger);
  private readonly temp = makeTempDir('fm-collector-');
  private sequence = 0;

  constructor(create: CollectorPlugin<C>['create'], engine: EngineClient, options: Partial<AgentOptions> = {}, flags: Partial<DomainFlagValues> = {}) {
    this.options = { dataDir: this.temp.path, brokerAddress: undefined, token: undefined, caPin: undefined, name: 'h1', ...TEST_AGENT_DEFAULTS, ...options };
    const sampler = { addContributor: () => undefined, onSample: () => undefined } as unknown as SystemSampler;
    const context: CollectorContext = {
      options: this.options,
      flags: flags as DomainFlagValues,
      // What a domain's agentOptions makes of its flags: no collector tested this way takes any.
      domainOptions: undefined,
      sampler,
      log: silentLogger,
      hooks: {
        report: (kind, payload) => this.reports.push({ kind, payload }),
        onAvailabilityChange: () => {
          this.availabilityChanges += 1;
        },
        onFactsChange: () => undefined,
      },
      engine,
    };
    this.collector = create(context);
    this.collector.register(this.dispatcher);
  }

  /** The payloads of the reports of one kind, oldest first. */
  reportsOf<T = unknown>(kind: string): T[] {
    return this.reports.filter((report) => report.kind === kind).map((report) => report.payload as T);
  }

  call<A extends Action>(action: A, params: ActionInput<A>, call: { callerLevel?: number; deadlineMs?: number } = {}): Promise<CallAnswer<A>> {
    const chunks: unknown[] = [];
    return new Promise((resolve) => {
      void this.dispatcher.run(
        {
          callId: `unit-${this.sequence++}`,
          action: action.id,
          paramsJson: encoder.encode(JSON.stringify(params)),
          deadlineUnixMs: Date.now() + (call.deadlineMs ?? 30_000),
          caller: 'unit-test',
          callerLevel: call.callerLevel ?? 3,
        },
        {
          chunk: (_callId, _seq, payloadJson) => chunks.push(JSON.parse(decoder.decode(payloadJson))),
          result: (_callId, payloadJson, failedCollectors, errors) =>
            resolve({ payload: JSON.parse(decoder.decode(payloadJson)) as ActionOutput<A> | null, errors, failedCollectors, chunks }),
        },
      );
    });
  }

  async stop(): Promise<void> {
    await this.collector.stop?.();
    this.temp.remove();
  }
}

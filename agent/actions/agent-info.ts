import type { ActionOutput } from '../../shared/catalog/action.ts';
import type { HostSample } from '../../shared/catalog/sample.ts';
import type { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { sleep } from '../connection/backoff.ts';
import type { ActionHandler } from '../dispatcher/dispatcher.ts';

/** What agent.info reports, read fresh at each call. */
interface AgentInfoSource {
  describe(): Omit<ActionOutput<typeof agentInfo>, 'sample' | 'uptime_s'>;
  sample(): HostSample;
}

/** agent.info: the agent's self-description; with watch_ms, a sample streamed every interval_ms first. */
export function createAgentInfoHandler(source: AgentInfoSource): ActionHandler<typeof agentInfo> {
  return async (params, context) => {
    const build = () => {
      const described = source.describe();
      return { ...described, uptime_s: Math.round((Date.now() - described.started_at_unix_ms) / 1000), sample: source.sample() };
    };
    const watchMs = params.watch_ms ?? 0;
    if (watchMs <= 0) return { payload: build() };
    const intervalMs = params.interval_ms ?? 1000;
    const until = Date.now() + watchMs;
    const samples: { uptime_s: number; sample: HostSample }[] = [];
    while (Date.now() < until && !context.signal.aborted) {
      const info = build();
      const streamed = { uptime_s: info.uptime_s, sample: info.sample };
      samples.push(streamed);
      context.emit(streamed);
      await sleep(Math.min(intervalMs, Math.max(0, until - Date.now())), context.signal);
    }
    context.signal.throwIfAborted();
    return { payload: { ...build(), samples } };
  };
}

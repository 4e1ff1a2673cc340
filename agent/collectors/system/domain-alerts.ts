import type { ActionOutput } from '../../../shared/catalog/action.ts';
import { agentInfo } from '../../../shared/domains/agent/agent-actions.ts';
import type { CheckedHost } from '../../../shared/domains/domain-parts.ts';
import { ALERT_PARTS } from '../../../shared/domains/parts.ts';
import type { alerts } from '../../../shared/domains/system/system-actions.ts';
import type { CallContext } from '../../dispatcher/dispatcher.ts';
import type { LocalCalls } from '../../dispatcher/local-calls.ts';

type Answer = ActionOutput<typeof alerts>;

/** What the domains' alert parts found on this host: their rows, the calls that say why, and the collectors that did not answer. */
export interface DomainAlerts {
  rows: Answer['alerts'];
  nextCalls: Answer['next_calls'];
  failed: string[];
}

/**
 * Runs every domain's part of `alerts` on this host, through the host's own
 * actions, so the system domain lists a failed unit without knowing what a
 * unit is. Each next call names the host, as the model must when it makes it.
 */
export async function domainAlerts(calls: LocalCalls, context: CallContext): Promise<DomainAlerts> {
  const found: DomainAlerts = { rows: [], nextCalls: [], failed: [] };
  if (ALERT_PARTS.length === 0) return found;
  const info = await calls.run(agentInfo, {}, context);
  if (!info.payload) return found;
  const host: CheckedHost = { facts: info.payload.facts, collectors: info.payload.collectors, run: (action, input) => calls.run(action, input, context) };
  const name = info.payload.name;
  for (const examined of await Promise.all(ALERT_PARTS.map((part) => part.examine(host)))) {
    found.failed.push(...(examined.failed ?? []));
    for (const alert of examined.alerts) {
      found.rows.push({
        metric: alert.kind,
        subject: alert.subject,
        state: alert.state,
        detail: alert.detail,
        since_unix_ms: alert.since_unix_ms,
        value_percent: null,
        threshold_percent: null,
      });
      found.nextCalls.push(
        ...alert.next.map((next) => ({
          tool: next.tool,
          arguments: { host: name, ...next.arguments },
          reason: `${alert.kind} ${alert.subject} (${alert.detail})`,
        })),
      );
    }
  }
  return found;
}

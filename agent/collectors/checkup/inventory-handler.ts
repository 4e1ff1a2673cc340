import type { z } from 'zod';
import { agentInfo } from '../../../shared/domains/agent/agent-actions.ts';
import type { hostInventoryShape, inventoryExport, inventoryScan } from '../../../shared/domains/checkup/inventory-actions.ts';
import type { CheckedHost } from '../../../shared/domains/domain-parts.ts';
import { INVENTORY_PARTS } from '../../../shared/domains/parts.ts';
import type { ActionHandler, CallContext, HandlerResult } from '../../dispatcher/dispatcher.ts';
import type { LocalCalls } from '../../dispatcher/local-calls.ts';

type HostInventory = z.infer<typeof hostInventoryShape>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * This host's inventory: its own description, then each domain's part, found
 * by the part from the host's facts and its own actions. A collector that does
 * not answer leaves its part empty and is named in failed_collectors.
 */
async function scanHost(
  calls: LocalCalls,
  context: CallContext,
): Promise<{ inventory: HostInventory; counts: Record<string, number | null>; result: Omit<HandlerResult, 'payload'> }> {
  const info = await calls.run(agentInfo, {}, context);
  const facts = info.payload?.facts ?? {};
  const host: CheckedHost = { facts, collectors: info.payload?.collectors ?? [], run: (action, params) => calls.run(action, params, context) };
  const scans = await Promise.all(INVENTORY_PARTS.map((part) => part.scan(host)));
  // A part whose collector is absent here found nothing because there is nothing: not a failure.
  const absent = new Set(host.collectors.filter((c) => !c.available && c.absent).map((c) => c.name));
  const failed = scans.flatMap((scan) => scan.failed ?? []);
  return {
    inventory: { hostname: text(facts.hostname), os: text(facts.os), arch: text(facts.arch), ...Object.assign({}, ...scans.map((scan) => scan.fields)) },
    counts: Object.assign({}, ...scans.map((scan) => scan.counts ?? {})),
    result: {
      failedCollectors: failed.filter((name) => !absent.has(name)),
      absentCollectors: failed.filter((name) => absent.has(name)),
      errors: scans.flatMap((scan) => scan.errors ?? []).filter((error) => !error.collector || !absent.has(error.collector)),
    },
  };
}

export function createInventoryScanHandler(calls: LocalCalls): ActionHandler<typeof inventoryScan> {
  return async (_params, context) => {
    const { inventory, counts, result } = await scanHost(calls, context);
    return { payload: { ...inventory, ...counts, sampled_at_unix_ms: Date.now() }, ...result };
  };
}

/** inventory_export: the same scan; the broker draws the fleet's graph from every host's answer (mermaid), or leaves the data as it is (json). */
export function createInventoryExportHandler(calls: LocalCalls): ActionHandler<typeof inventoryExport> {
  return async (params, context) => {
    const { inventory, counts, result } = await scanHost(calls, context);
    return { payload: { ...inventory, ...counts, format: params.format ?? 'mermaid', sampled_at_unix_ms: Date.now() }, ...result };
  };
}

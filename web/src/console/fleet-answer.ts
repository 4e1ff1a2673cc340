import type { CallTool } from '../call-tool.ts';

/** One host's answer in a fleet envelope: the node's fields beside the tool's own. */
export type FleetNode = Record<string, unknown> & { host: string; availability: string; errors: { code: string; message: string }[] };

/** A tool's answer for every host: the hosts that answered, those that failed with their errors, and where the collector is absent. */
export interface FleetAnswer {
  nodes: FleetNode[];
  /** Hosts whose answer failed (unavailable, or the collector failed), each with its first error; a call refused as a whole is one row without a host. */
  failed: { host: string; message: string }[];
  /** Hosts with nothing for the tool to collect (no engine, not configured): no failure. */
  absent: string[];
}

/** Envelopes read one after another at most, so a paged answer of a huge fleet still ends. */
const MAX_PAGES = 50;

/**
 * Calls a tool for every host and gathers its fleet envelope, page after page
 * (next_cursor), into the nodes, the failed hosts and the absent ones.
 */
export async function fleetAnswer(call: CallTool, tool: string, args: Record<string, unknown>, collector: string): Promise<FleetAnswer> {
  const result: FleetAnswer = { nodes: [], failed: [], absent: [] };
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await call(tool, { ...args, ...(cursor ? { cursor } : {}) });
    if (answer.error) {
      result.failed.push({ host: '', message: `${answer.error.message}${answer.error.hint ? ` — ${answer.error.hint}` : ''}` });
      break;
    }
    const envelope = answer.structured ?? {};
    for (const node of (envelope.hosts ?? []) as FleetNode[]) {
      const failed = node.availability === 'unavailable' || ((node.failed_collectors ?? []) as string[]).includes(collector);
      if (failed) result.failed.push({ host: node.host, message: node.errors.map((e) => `${e.code}: ${e.message}`).join('; ') || 'no answer' });
      else result.nodes.push(node);
    }
    for (const absent of (envelope.absent_collectors ?? []) as { collector: string; hosts: string[] }[]) {
      if (absent.collector === collector) result.absent.push(...absent.hosts);
    }
    cursor = envelope.next_cursor as string | undefined;
    if (!cursor) break;
  }
  return result;
}

/** The largest telemetry line the daemon writes; anything longer was cut and is dropped whole. */
const MAX_TELEMETRY_LINE_BYTES = 16 * 1024;

interface SpanRecord {
  ts: number;
  trace: string;
  span: string;
  parent?: string;
  name: string;
  dur_ms: number;
  status: string;
  attrs: Record<string, unknown>;
}

interface EventRecord {
  ts: number;
  trace?: string;
  parent?: string;
  name: string;
  attrs: Record<string, unknown>;
}

interface SampleRecord {
  ts: number;
  scope: string;
  metrics: Record<string, unknown>;
}

export interface Telemetry {
  spans: SpanRecord[];
  events: EventRecord[];
  samples: SampleRecord[];
  records: number;
  droppedOversized: number;
  droppedMalformed: number;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const attrsOf = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * Parses the ephemeral-os telemetry NDJSON: one object a line tagged by kind
 * (span, event, sample). Lines over 16 KiB and lines that are not a well-formed
 * record are counted and dropped, never guessed at.
 */
export function parseTelemetry(texts: readonly string[]): Telemetry {
  const result: Telemetry = { spans: [], events: [], samples: [], records: 0, droppedOversized: 0, droppedMalformed: 0 };
  for (const text of texts) {
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      if (Buffer.byteLength(line) > MAX_TELEMETRY_LINE_BYTES) {
        result.droppedOversized += 1;
        continue;
      }
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        result.droppedMalformed += 1;
        continue;
      }
      if (
        record.kind === 'span' &&
        isNumber(record.ts) &&
        isString(record.trace) &&
        isString(record.span) &&
        isString(record.name) &&
        isNumber(record.dur_ms)
      ) {
        result.spans.push({
          ts: record.ts,
          trace: record.trace,
          span: record.span,
          ...(isString(record.parent) ? { parent: record.parent } : {}),
          name: record.name,
          dur_ms: record.dur_ms,
          status: isString(record.status) ? record.status : 'completed',
          attrs: attrsOf(record.attrs),
        });
      } else if (record.kind === 'event' && isNumber(record.ts) && isString(record.name)) {
        result.events.push({
          ts: record.ts,
          ...(isString(record.trace) ? { trace: record.trace } : {}),
          ...(isString(record.parent) ? { parent: record.parent } : {}),
          name: record.name,
          attrs: attrsOf(record.attrs),
        });
      } else if (record.kind === 'sample' && isNumber(record.ts) && isString(record.scope)) {
        const { kind: _kind, ts, scope, ...metrics } = record;
        result.samples.push({ ts: ts as number, scope: scope as string, metrics });
      } else {
        result.droppedMalformed += 1;
        continue;
      }
      result.records += 1;
    }
  }
  return result;
}

export interface SpanNode {
  span: SpanRecord;
  offset_ms: number;
  children: SpanNode[];
  events: EventRecord[];
}

/**
 * A trace as a forest: each span with its children and events, and its offset
 * from the trace's first start (start = ts − dur_ms). `last` is the root trace
 * that started most recently; an unknown trace gives an empty forest.
 */
export function traceForest(telemetry: Telemetry, wanted: string): { trace: string | null; spans: SpanNode[] } {
  let traceId: string | null = wanted;
  if (wanted === 'last') {
    const roots = telemetry.spans.filter((s) => !s.parent).sort((a, b) => b.ts - b.dur_ms - (a.ts - a.dur_ms));
    traceId = roots[0]?.trace ?? null;
  }
  if (traceId === null) return { trace: null, spans: [] };
  const spans = telemetry.spans.filter((s) => s.trace === traceId);
  if (spans.length === 0) return { trace: traceId, spans: [] };
  const start = Math.min(...spans.map((s) => s.ts - s.dur_ms));
  const nodes = new Map<string, SpanNode>(
    spans.map((span) => [
      span.span,
      { span, offset_ms: span.ts - span.dur_ms - start, children: [], events: telemetry.events.filter((e) => e.trace === traceId && e.parent === span.span) },
    ]),
  );
  const roots: SpanNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.span.parent ? nodes.get(node.span.parent) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  const order = (list: SpanNode[]) => {
    list.sort((a, b) => a.offset_ms - b.offset_ms);
    for (const node of list) order(node.children);
  };
  order(roots);
  return { trace: traceId, spans: roots };
}

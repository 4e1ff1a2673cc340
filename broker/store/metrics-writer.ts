import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { MetricKind, MetricRow } from './metrics-table.ts';

/**
 * Rows as the writer's thread receives them: a column of strings and one of
 * numbers. Copying 130,000 row objects to another thread (a minute of 10,000
 * hosts of a dozen containers) took three times as long on the sending thread
 * as copying their figures and strings apart.
 */
export interface PackedRows {
  count: number;
  /** kind, entity, host_id, name, service (null for none): STRINGS_PER_ROW a row. */
  strings: (string | null)[];
  /** minute, cpu_percent, memory_bytes, net_bytes_per_s, disk_percent (NaN for none): NUMBERS_PER_ROW a row. */
  numbers: Float64Array;
}

const STRINGS_PER_ROW = 5;
const NUMBERS_PER_ROW = 5;

const orNaN = (value: number | null): number => value ?? Number.NaN;
const orNull = (value: number): number | null => (Number.isNaN(value) ? null : value);

export function packRows(rows: readonly MetricRow[]): PackedRows {
  const strings: (string | null)[] = new Array(rows.length * STRINGS_PER_ROW);
  const numbers = new Float64Array(rows.length * NUMBERS_PER_ROW);
  for (const [i, row] of rows.entries()) {
    const s = i * STRINGS_PER_ROW;
    strings[s] = row.kind;
    strings[s + 1] = row.entity;
    strings[s + 2] = row.host_id;
    strings[s + 3] = row.name;
    strings[s + 4] = row.service;
    const n = i * NUMBERS_PER_ROW;
    numbers[n] = row.minute;
    numbers[n + 1] = orNaN(row.cpu_percent);
    numbers[n + 2] = orNaN(row.memory_bytes);
    numbers[n + 3] = orNaN(row.net_bytes_per_s);
    numbers[n + 4] = orNaN(row.disk_percent);
  }
  return { count: rows.length, strings, numbers };
}

export function unpackRows({ count, strings, numbers }: PackedRows): MetricRow[] {
  const rows: MetricRow[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const s = i * STRINGS_PER_ROW;
    const n = i * NUMBERS_PER_ROW;
    rows[i] = {
      kind: strings[s] as MetricKind,
      entity: strings[s + 1] as string,
      host_id: strings[s + 2] as string,
      name: strings[s + 3] as string,
      service: strings[s + 4] ?? null,
      minute: numbers[n] as number,
      cpu_percent: orNull(numbers[n + 1] as number),
      memory_bytes: orNull(numbers[n + 2] as number),
      net_bytes_per_s: orNull(numbers[n + 3] as number),
      disk_percent: orNull(numbers[n + 4] as number),
    };
  }
  return rows;
}

/** What the broker asks of the writer's thread; each request is answered with its id (and an error message when it failed). */
type WriterOp = { op: 'upsert'; rows: PackedRows } | { op: 'prune'; before: number; maxRows: number };
export type WriterRequest = WriterOp & { id: number };
export interface WriterReply {
  id: number;
  error?: string;
}

/** tsx's ES-module API (its `register`), found from its package's exports. */
function tsxLoaderUrl(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('tsx/package.json');
  const { exports } = require(manifest) as { exports: Record<string, { import: { default: string } }> };
  const api = exports['./esm/api']?.import.default;
  if (api === undefined) throw new Error('tsx lacks its ES-module API (./esm/api)');
  return pathToFileURL(join(dirname(manifest), api)).href;
}

/**
 * Runs `file` (this directory's module of that name: TypeScript in a
 * checkout, JavaScript once built) as a worker thread. The TypeScript form
 * needs tsx's loader in the thread, which a thread does not inherit from a
 * loader registered at run time.
 */
function startWorker(file: string, workerData: unknown): Worker {
  const extension = extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./${file}${extension}`, import.meta.url).href;
  const tsx = extension === '.ts' ? tsxLoaderUrl() : null;
  const bootstrap = `const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();`;
  return new Worker(bootstrap, { eval: true, workerData: { tsx, entry, data: workerData } });
}

/**
 * The metrics table's writes on a thread of their own, through its own
 * connection to the same SQLite file. A minute of 10,000 hosts is 130,000
 * rows and 2.5–5.3 s of SQLite's time: on the broker's main thread that
 * time was taken from heartbeats and calls, and on a saturated broker the
 * minutes waiting their turn piled up in its heap. Reads stay on the main
 * connection (WAL: they see every write acknowledged before them).
 *
 * The thread starts with the first write, or when the broker opens it
 * (open()), so commands that only read the store start none.
 */
export class MetricsWriter {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  /** The latest request, settled: the thread answers in order, so once it is, all are. */
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly path: string) {}

  /**
   * Starts the thread now rather than with the first write: a broker, which
   * writes every minute, pays its memory (a second V8 isolate, about 10 MiB)
   * at start, not a minute into its life.
   */
  open(): void {
    if (this.worker === null) this.start();
  }

  upsert(rows: readonly MetricRow[]): Promise<void> {
    return this.request({ op: 'upsert', rows: packRows(rows) });
  }

  prune(before: number, maxRows: number): Promise<void> {
    return this.request({ op: 'prune', before, maxRows });
  }

  /** Waits for the writes asked for, then ends the thread. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    await this.last;
    this.worker = null;
    await worker.terminate();
  }

  private settle(id: number, error: Error | null): void {
    const request = this.pending.get(id);
    if (request === undefined) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
    if (error === null) request.resolve();
    else request.reject(error);
  }

  private request(op: WriterOp): Promise<void> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    const message: WriterRequest = { ...op, id };
    const done = new Promise<void>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    // The thread keeps the process alive while it has work, not while it waits for some.
    worker.ref();
    if (message.op === 'upsert') worker.postMessage(message, [message.rows.numbers.buffer as ArrayBuffer]);
    else worker.postMessage(message);
    this.last = done.catch(() => {});
    return done;
  }

  private start(): Worker {
    const worker = startWorker('metrics-writer-worker', { path: this.path });
    worker.on('message', (reply: WriterReply) => this.settle(reply.id, reply.error === undefined ? null : new Error(reply.error)));
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const id of [...this.pending.keys()]) this.settle(id, error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the metrics writer's thread ended (exit code ${code})`)));
    // Waiting for work, the thread does not keep the process alive (request() holds it while it has some).
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

import { AsyncLocalStorage } from 'node:async_hooks';

/** A value a statement parameter or a result column holds, the same on both engines. */
export type SqlValue = string | number | null;

/**
 * One database underneath the broker store: embedded SQLite or a PostgreSQL
 * server. Statements are written once, with `?` placeholders, in the SQL both
 * engines speak (upserts with ON CONFLICT, lower() for case-insensitive names,
 * 64-bit integers for times). Only the engines know which one is underneath.
 */
export interface SqlEngine {
  /** For messages and /readyz: `sqlite:PATH` or the PostgreSQL URL without its password. */
  readonly description: string;
  /** Whether other brokers may share it (a server), or it is this broker's alone (a file). */
  readonly shared: boolean;
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  /**
   * Runs a statement; resolves to the number of rows it changed. `ahead`: it
   * goes before the statements waiting for one of a server's connections (a
   * lease whose renewal must not wait behind a crowd of agents' reads).
   */
  run(sql: string, params?: readonly SqlValue[], options?: { ahead?: boolean }): Promise<number>;
  /**
   * Runs `work` in one transaction: every statement issued from inside it, at
   * any depth of awaits, belongs to it; a nested call joins the outer one.
   * Commits when `work` resolves, rolls back when it throws.
   */
  transaction<T>(work: () => Promise<T>): Promise<T>;
  /** Applies the migrations not applied yet, each in its own transaction. */
  migrate(migrations: readonly string[]): Promise<void>;
  /** The number of migrations applied. */
  schemaVersion(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Items split for statements of many rows each: as many of `max` as fit, then
 * the rest in powers of two. A statement's text depends on its row count, and
 * the engines keep each text they run (SQLite prepared, PostgreSQL with its
 * placeholders numbered): the counts stay few whatever the number of items
 * (500 rows a batch and 137 left: 500, 128, 8, 1).
 */
export function batchesOf<T>(items: readonly T[], max: number): T[][] {
  const batches: T[][] = [];
  let start = 0;
  while (start < items.length) {
    const left = items.length - start;
    const size = left >= max ? max : 2 ** Math.floor(Math.log2(left));
    batches.push(items.slice(start, start + size));
    start += size;
  }
  return batches;
}

/** The `?, ?, …` of an IN list of `count` items. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}

/** Items of an IN list per statement: far below SQLite's 32,766 parameters and PostgreSQL's 65,535. */
export const IN_LIST_MAX = 500;

/**
 * Runs `query` for batchesOf(items, IN_LIST_MAX) and joins what each returns:
 * an IN list as long as the fleet stays within the engines' parameter limits
 * and makes few statement texts. Rows come batch after batch: a caller that
 * wants one order sorts them, or sums them again, when there was more than one.
 */
export async function queryInBatches<T, R>(items: readonly T[], query: (batch: T[]) => Promise<R[]>): Promise<{ rows: R[]; batches: number }> {
  const batches = batchesOf(items, IN_LIST_MAX);
  const rows: R[] = [];
  for (const batch of batches) rows.push(...(await query(batch)));
  return { rows, batches: batches.length };
}

/**
 * Which transaction the code running now belongs to, at any depth of awaits:
 * what an engine tells its transaction's statements from the others by. It is
 * followed only while some transaction runs. Enabled, an AsyncLocalStorage
 * sends every promise, timer and write of the process through async hooks
 * (every await about twice as costly: docs/performance.md), and transactions
 * are rare.
 */
export class TransactionContext<T> {
  private readonly storage = new AsyncLocalStorage<T>();
  private running = 0;

  /** The transaction the caller runs in, if any. */
  get current(): T | undefined {
    return this.storage.getStore();
  }

  /** Runs `work` as part of `transaction`. */
  async run<R>(transaction: T, work: () => Promise<R>): Promise<R> {
    this.running += 1;
    try {
      return await this.storage.run(transaction, work);
    } finally {
      this.running -= 1;
      if (this.running === 0) this.storage.disable();
    }
  }
}

/** Resolves once the event loop has run what waits (I/O, timers): taken between two statements of a long write. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * How long a batched write goes on before it lets the event loop run. A turn
 * of a busy loop is long: a write of a minute of 10,000 hosts' metrics (260
 * statements) that let it run after every statement took minutes on a
 * saturated broker, and the minutes waiting to be written piled up in memory.
 */
const WRITE_TURN_MS = 50;

/**
 * Writes items in batchesOf(items, max), one `write` at a time, letting the
 * event loop run after every WRITE_TURN_MS of writing: a fleet's worth of
 * rows does not hold up heartbeats and calls for the whole write, nor wait a
 * turn of the loop for each batch.
 */
export async function writeInBatches<T>(items: readonly T[], max: number, write: (batch: T[]) => Promise<unknown>): Promise<void> {
  let turnFrom = performance.now();
  for (const [i, batch] of batchesOf(items, max).entries()) {
    if (i > 0 && performance.now() - turnFrom >= WRITE_TURN_MS) {
      await nextTurn();
      turnFrom = performance.now();
    }
    await write(batch);
  }
}

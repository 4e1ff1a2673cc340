import { setTimeout } from 'node:timers/promises';
import pg from 'pg';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { ConnectionTurns } from './connection-turns.ts';
import { type SqlEngine, type SqlValue, TransactionContext } from './sql-engine.ts';

/** The lock every broker takes while it migrates, so brokers starting together migrate once. */
const MIGRATION_LOCK = 0x666c6d65;
/** BIGINT (ms timestamps, counts) as a JS number, as SQLite returns it; fleet figures stay far below 2^53. */
const INT8_OID = 20;
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
/** Connections each broker keeps to the server. */
const POOL_SIZE = 10;
/**
 * How long opening a connection to the server may take before the store is
 * `unavailable`; and, apart, how long a statement may wait for one of the
 * broker's connections while others use them (ConnectionTurns).
 */
const CONNECT_TIMEOUT_MS = 5000;
const TURN_WAIT_MS = 60_000;
/** Serializable transactions that lost a race to another broker are run again, this many times in all. */
const TRANSACTION_ATTEMPTS = 8;

/**
 * A PostgreSQL server shared by several brokers, through a pool of `pg`
 * connections. Transactions are SERIALIZABLE, so a check-then-write (a join
 * token's uses, a name taken) holds across brokers; one that loses a race is
 * run again. A server that cannot be reached is `unavailable`, never a crash:
 * the pool reconnects by itself when the server is back.
 */
export class PostgresEngine implements SqlEngine {
  readonly description: string;
  readonly shared = true;
  private readonly pool: pg.Pool;
  /** The connection of the transaction a statement runs in. */
  private readonly context = new TransactionContext<pg.PoolClient>();
  private readonly placeholders = new Map<string, string>();
  /** The pool's connections, taken in turn: the pool itself never queues (see ConnectionTurns). */
  private readonly turns = new ConnectionTurns(POOL_SIZE, TURN_WAIT_MS, "the broker's store (PostgreSQL)");

  constructor(url: string) {
    const shown = new URL(url);
    shown.password = '';
    this.description = shown.toString().replace(/:@/, '@');
    this.pool = new pg.Pool({ connectionString: url, max: POOL_SIZE, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, types: TYPES });
    // An idle connection the server dropped: the pool discards it and opens another when asked.
    this.pool.on('error', () => {});
    // A connection the server drops while it is checked out (PostgreSQL restarting mid-query) fails
    // that query; without a listener its 'error' event would take the whole broker down.
    this.pool.on('connect', (client) => client.on('error', () => {}));
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async run(sql: string, params: readonly SqlValue[] = [], options: { ahead?: boolean } = {}): Promise<number> {
    return (await this.query(sql, params, options.ahead)).rowCount ?? 0;
  }

  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.context.current) return work();
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      // The turn taken by connect() is the transaction's until the client goes back.
      let broken = false;
      try {
        await this.on(client, 'BEGIN ISOLATION LEVEL SERIALIZABLE');
        const result = await this.context.run(client, work);
        await this.on(client, 'COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => (broken = true));
        if (!lostRace(error)) throw error;
        if (attempt >= TRANSACTION_ATTEMPTS) {
          throw new FleetError('unavailable', `the broker's store stayed too busy to settle a change (${TRANSACTION_ATTEMPTS} attempts)`, {
            hint: 'Try again: other brokers were changing the same rows at the same moment.',
            cause: error,
          });
        }
      } finally {
        client.release(broken);
        this.turns.give();
      }
      // Transactions that lost to each other run again spread out, or they would meet again at once.
      await setTimeout(Math.random() * 20 * attempt);
    }
  }

  async migrate(migrations: readonly string[]): Promise<void> {
    const client = await this.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
      const applied = Number((await client.query('SELECT version FROM schema_version')).rows[0]?.version ?? 0);
      for (let version = applied; version < migrations.length; version++) await client.query(postgresDialect(migrations[version] ?? ''));
      if (applied < migrations.length) {
        await client.query('DELETE FROM schema_version');
        await client.query('INSERT INTO schema_version (version) VALUES ($1)', [Math.max(applied, migrations.length)]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw asStoreError(error);
    } finally {
      client.release();
      this.turns.give();
    }
  }

  async schemaVersion(): Promise<number> {
    const row = await this.get<{ version: number | null }>('SELECT max(version) AS version FROM schema_version').catch((error: unknown) => {
      // The table is created by the first migration run; before that nothing is applied.
      if (error instanceof pg.DatabaseError && error.code === '42P01') return undefined;
      throw error;
    });
    return row?.version ?? 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async query(sql: string, params: readonly SqlValue[], ahead = false): Promise<pg.QueryResult> {
    const text = this.numbered(sql);
    try {
      const inTransaction = this.context.current;
      if (inTransaction) return await inTransaction.query(text, params as SqlValue[]);
      return await this.turns.with(() => this.pool.query(text, params as SqlValue[]), ahead);
    } catch (error) {
      throw asStoreError(error);
    }
  }

  private async on(client: pg.PoolClient, sql: string): Promise<void> {
    try {
      await client.query(sql);
    } catch (error) {
      throw asStoreError(error);
    }
  }

  /** A client of the pool on a turn of its own; the caller gives both back. */
  private async connect(): Promise<pg.PoolClient> {
    await this.turns.take();
    try {
      return await this.pool.connect();
    } catch (error) {
      this.turns.give();
      throw asStoreError(error);
    }
  }

  /** `?` placeholders as PostgreSQL's `$1, $2, …` (our statements hold no `?` in literals). */
  private numbered(sql: string): string {
    let text = this.placeholders.get(sql);
    if (text === undefined) {
      let n = 0;
      text = sql.replace(/\?/g, () => `$${++n}`);
      if (this.placeholders.size >= 500) this.placeholders.clear();
      this.placeholders.set(sql, text);
    }
    return text;
  }
}

/**
 * The migrations are written in SQLite's column types; these are the few words
 * PostgreSQL spells otherwise. Times are milliseconds, so INTEGER is 64-bit.
 */
export function postgresDialect(sql: string): string {
  return sql
    .replace(/\bINTEGER PRIMARY KEY AUTOINCREMENT\b/g, 'BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY')
    .replace(/\bINTEGER\b/g, 'BIGINT')
    .replace(/\bREAL\b/g, 'DOUBLE PRECISION')
    .replace(/\)\s*WITHOUT ROWID/g, ')')
    .replace(/\((\w+) COLLATE NOCASE\)/g, '(lower($1))');
}

/** A transaction another broker's concurrent one made impossible: running it again is safe. */
function lostRace(error: unknown): boolean {
  const code = error instanceof pg.DatabaseError ? error.code : undefined;
  return code === '40001' || code === '40P01';
}

/**
 * The server's own refusals (a constraint, a bad statement) stay what they
 * are; a server that cannot be reached, or is shutting down or starting, is
 * `unavailable` so callers can tell a store outage from a bug.
 */
function asStoreError(error: unknown): unknown {
  if (error instanceof FleetError) return error;
  const code = error instanceof pg.DatabaseError ? (error.code ?? '') : undefined;
  const unreachable = code === undefined ? error instanceof Error : /^(08|57P0|53)/.test(code);
  if (!unreachable) return error;
  return new FleetError('unavailable', `the broker's store (PostgreSQL) does not answer: ${(error as Error).message || (error as Error).name}`, {
    cause: error,
  });
}

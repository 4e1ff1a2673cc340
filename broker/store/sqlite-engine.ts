import Database from 'better-sqlite3';
import { type SqlEngine, type SqlValue, TransactionContext } from './sql-engine.ts';

/**
 * The embedded engine: one better-sqlite3 connection. WAL lets admin commands
 * (`token create`, `revoke`, …) write while the broker runs; every commit is
 * synchronous so nothing acknowledged is lost to a crash. A statement outside
 * a transaction runs at once, as it is called; while a transaction awaits,
 * statements from elsewhere wait for it to end instead of slipping into it.
 */
export class SqliteEngine implements SqlEngine {
  readonly description: string;
  readonly shared = false;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly context = new TransactionContext<object>();
  /** The transaction in progress, and a promise that settles when it ends. */
  private active: { token: object; ended: Promise<void> } | undefined;

  private constructor(
    private readonly db: Database.Database,
    path: string,
  ) {
    this.description = `sqlite:${path}`;
  }

  /** Opens (or, with `create`, creates) the database file; throws better-sqlite3's error when it cannot. */
  static open(path: string, options: { create: boolean }): SqliteEngine {
    const db = new Database(path, { fileMustExist: !options.create });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    return new SqliteEngine(db, path);
  }

  all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.when(() => this.statement(sql).all(...params) as T[]);
  }

  get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return this.when(() => this.statement(sql).get(...params) as T | undefined);
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.when(() => this.statement(sql).run(...params).changes);
  }

  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.active && this.context.current === this.active.token) return work();
    while (this.active) await this.active.ended;
    let end = () => {};
    const token = {};
    this.active = { token, ended: new Promise<void>((resolve) => (end = resolve)) };
    try {
      // IMMEDIATE, so writers in other processes queue (busy_timeout) instead of failing half-way.
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const result = await this.context.run(token, work);
        this.db.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw error;
      }
    } finally {
      this.active = undefined;
      end();
    }
  }

  /**
   * Applies the migrations the file lacks, one per IMMEDIATE transaction that
   * reads the version it starts from inside its lock: another process opening
   * the same file at once (a CLI command beside a starting broker) waits for
   * it, then finds that migration applied instead of applying it again.
   */
  async migrate(migrations: readonly string[]): Promise<void> {
    const step = this.db.transaction(() => {
      const version = this.db.pragma('user_version', { simple: true }) as number;
      if (version >= migrations.length) return false;
      this.db.exec(migrations[version] ?? '');
      this.db.pragma(`user_version = ${version + 1}`);
      return true;
    });
    while (step.immediate()) {}
  }

  async schemaVersion(): Promise<number> {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  async close(): Promise<void> {
    while (this.active) await this.active.ended;
    if (this.db.open) this.db.close();
  }

  /** Runs `statement` now, or once the transaction in progress (if it is not ours) has ended. */
  private when<T>(statement: () => T): Promise<T> {
    const active = this.active;
    if (active && this.context.current !== active.token) return active.ended.then(() => this.when(statement));
    try {
      return Promise.resolve(statement());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      // Statements with a list of placeholders vary with the list's length: keep the cache bounded.
      if (this.statements.size >= 500) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

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
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
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

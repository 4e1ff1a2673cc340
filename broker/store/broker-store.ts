import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { AgentRolesTable } from './agent-roles-table.ts';
import { AgentsTable } from './agents-table.ts';
import { AuditTable } from './audit-table.ts';
import { CertificatesTable } from './certificates-table.ts';
import { IdentitiesTable } from './identities-table.ts';
import { JoinTokensTable } from './join-tokens-table.ts';
import { MIGRATIONS } from './migrations.ts';

export const STORE_FILE = 'fleetmesh.db';

/**
 * The broker's state in one SQLite file in its data dir. WAL lets admin
 * commands (`token create`, `revoke`, …) write while the broker runs; every
 * commit is synchronous so nothing acknowledged is lost to a crash.
 */
export class BrokerStore {
  readonly db: Database.Database;
  readonly agents: AgentsTable;
  readonly roles: AgentRolesTable;
  readonly tokens: JoinTokensTable;
  readonly certificates: CertificatesTable;
  readonly identities: IdentitiesTable;
  readonly audit: AuditTable;

  private constructor(db: Database.Database) {
    this.db = db;
    this.agents = new AgentsTable(db);
    this.roles = new AgentRolesTable(db);
    this.tokens = new JoinTokensTable(db);
    this.certificates = new CertificatesTable(db);
    this.identities = new IdentitiesTable(db);
    this.audit = new AuditTable(db);
  }

  static open(dataDir: string, options: { create: boolean } = { create: true }): BrokerStore {
    if (options.create) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const path = join(dataDir, STORE_FILE);
    let db: Database.Database;
    try {
      db = new Database(path, { fileMustExist: !options.create });
    } catch (error) {
      throw new FleetError('not_found', `no broker state at ${path}: ${(error as Error).message}`, {
        hint: 'Pass the broker data dir with --data-dir (the broker creates it on first start).',
      });
    }
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db);
    return new BrokerStore(db);
  }

  /** Runs `work` in one transaction (IMMEDIATE, so concurrent writers queue instead of failing). */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /** Changes whenever another connection commits: a cheap way to notice admin commands. */
  dataVersion(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  getMeta(key: string): string | undefined {
    const row = this.db.prepare('SELECT value FROM broker_meta WHERE key = ?').get(key) as { value: string } | undefined;
    return row?.value;
  }

  setMeta(key: string, value: string): void {
    this.db.prepare('INSERT INTO broker_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function migrate(db: Database.Database): void {
  const current = schemaVersion(db);
  if (current > MIGRATIONS.length) {
    throw new FleetError('unsupported', `the broker state was written by a newer fleetmesh (schema ${current}, this one knows ${MIGRATIONS.length})`, {
      hint: 'Run the newer fleetmesh, or start from a fresh --data-dir.',
    });
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version] ?? '');
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}

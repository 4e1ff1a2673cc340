import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { AgentRolesTable } from './agent-roles-table.ts';
import { AgentsTable } from './agents-table.ts';
import { ApprovalsTable } from './approvals-table.ts';
import { AuditTable } from './audit-table.ts';
import { BrokersTable } from './brokers-table.ts';
import { CaSignerTable } from './ca-signer-table.ts';
import { CertificateAuthoritiesTable } from './certificate-authorities-table.ts';
import { CertificatesTable } from './certificates-table.ts';
import { IdentitiesTable } from './identities-table.ts';
import { IdentityRulesTable } from './identity-rules-table.ts';
import { JoinTokensTable } from './join-tokens-table.ts';
import { McpSessionsTable } from './mcp-sessions-table.ts';
import { McpTasksTable } from './mcp-tasks-table.ts';
import { MetricsTable } from './metrics-table.ts';
import { MetricsWriter } from './metrics-writer.ts';
import { MIGRATIONS } from './migrations.ts';
import { OAuthRecordsTable } from './oauth-records-table.ts';
import { PostgresEngine } from './postgres-engine.ts';
import type { SqlEngine } from './sql-engine.ts';
import { SqliteEngine } from './sqlite-engine.ts';
import { parseStoreLocation } from './store-location.ts';
import { TaskFailuresTable } from './task-failures-table.ts';
import { WebSessionsTable } from './web-sessions-table.ts';

export const STORE_FILE = 'fleetmesh.db';

interface StoreOpenOptions {
  /** Create the data dir and database when missing (the broker); admin commands want an existing one. */
  create?: boolean;
  /** `sqlite:PATH` or `postgres://…`; default: the SQLite file in the data dir. */
  store?: string | undefined;
  /** In a cluster, this broker's id: the audit rows it begins carry it. */
  brokerId?: string | undefined;
}

/**
 * The broker's state, on whichever engine `--store` names: one query layer and
 * one migration set for both. Every method is async; a store that cannot be
 * reached rejects with `unavailable`.
 */
export class BrokerStore {
  readonly agents: AgentsTable;
  readonly roles: AgentRolesTable;
  readonly tokens: JoinTokensTable;
  readonly certificates: CertificatesTable;
  readonly identities: IdentitiesTable;
  readonly identityRules: IdentityRulesTable;
  readonly oauth: OAuthRecordsTable;
  readonly approvals: ApprovalsTable;
  readonly audit: AuditTable;
  readonly metrics: MetricsTable;
  readonly taskFailures: TaskFailuresTable;
  readonly mcpTasks: McpTasksTable;
  readonly mcpSessions: McpSessionsTable;
  readonly webSessions: WebSessionsTable;
  readonly brokers: BrokersTable;
  readonly authorities: CertificateAuthoritiesTable;
  readonly signer: CaSignerTable;
  private closed = false;

  private constructor(
    private readonly sql: SqlEngine,
    brokerId: string | undefined,
    metricsWriter: MetricsWriter | null,
  ) {
    this.agents = new AgentsTable(sql);
    this.roles = new AgentRolesTable(sql);
    this.tokens = new JoinTokensTable(sql);
    this.certificates = new CertificatesTable(sql);
    this.identities = new IdentitiesTable(sql);
    this.identityRules = new IdentityRulesTable(sql);
    this.oauth = new OAuthRecordsTable(sql);
    this.approvals = new ApprovalsTable(sql);
    this.audit = new AuditTable(sql, brokerId);
    this.metrics = new MetricsTable(sql, metricsWriter);
    this.taskFailures = new TaskFailuresTable(sql);
    this.mcpTasks = new McpTasksTable(sql, brokerId);
    this.mcpSessions = new McpSessionsTable(sql);
    this.webSessions = new WebSessionsTable(sql);
    this.brokers = new BrokersTable(sql);
    this.authorities = new CertificateAuthoritiesTable(sql);
    this.signer = new CaSignerTable(sql);
  }

  static async open(dataDir: string, options: StoreOpenOptions = {}): Promise<BrokerStore> {
    const create = options.create ?? true;
    const location = parseStoreLocation(options.store, join(dataDir, STORE_FILE));
    let sql: SqlEngine;
    let metricsWriter: MetricsWriter | null = null;
    if (location.engine === 'sqlite') {
      if (create) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      try {
        sql = SqliteEngine.open(location.path, { create });
        metricsWriter = new MetricsWriter(location.path);
      } catch (error) {
        throw new FleetError('not_found', `no broker state at ${location.path}: ${(error as Error).message}`, {
          hint: 'Pass the broker data dir with --data-dir (the broker creates it on first start).',
        });
      }
    } else {
      sql = new PostgresEngine(location.url);
    }
    try {
      await migrate(sql);
    } catch (error) {
      await sql.close();
      throw error;
    }
    return new BrokerStore(sql, options.brokerId, metricsWriter);
  }

  /** Whether other brokers may share this store (a cluster), or it is this broker's alone. */
  get shared(): boolean {
    return this.sql.shared;
  }

  /** Where the state is, for logs: `sqlite:PATH` or the PostgreSQL URL without its password. */
  get description(): string {
    return this.sql.description;
  }

  /**
   * Runs `work` in one transaction. Every store call made while it runs (at
   * any depth of awaits) belongs to it; a nested call joins the outer one.
   */
  transaction<T>(work: () => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }

  /**
   * Changes whenever an agent is enrolled, renamed or revoked, or its roles
   * change, by this process or another (admin commands, other brokers): a
   * cheap way to notice them without reading every row.
   */
  async dataVersion(): Promise<string> {
    const row = await this.sql.get<Record<string, SqlNumber>>(
      `SELECT (SELECT COUNT(*) FROM agents) AS agents, (SELECT MAX(enrolled_at) FROM agents) AS enrolled,
              (SELECT MAX(revoked_at) FROM agents) AS revoked, (SELECT COUNT(*) FROM agent_roles) AS roles,
              (SELECT MAX(granted_at) FROM agent_roles) AS granted`,
    );
    return JSON.stringify(row ?? {});
  }

  /** Why the store cannot serve, or undefined when a trivial query answers. */
  async problem(): Promise<string | undefined> {
    if (this.closed) return 'closed';
    try {
      await this.sql.get('SELECT 1 AS one');
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }

  async getMeta(key: string): Promise<string | undefined> {
    return (await this.sql.get<{ value: string }>('SELECT value FROM broker_meta WHERE key = ?', [key]))?.value;
  }

  async deleteMeta(key: string): Promise<void> {
    await this.sql.run('DELETE FROM broker_meta WHERE key = ?', [key]);
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.sql.run('INSERT INTO broker_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.metrics.close();
    await this.sql.close();
  }
}

type SqlNumber = number | null;

/** Applies what is missing of the one migration set; refuses state written by a newer fleetmesh. */
async function migrate(sql: SqlEngine): Promise<void> {
  const current = await sql.schemaVersion();
  if (current > MIGRATIONS.length) {
    throw new FleetError('unsupported', `the broker state was written by a newer fleetmesh (schema ${current}, this one knows ${MIGRATIONS.length})`, {
      hint: 'Run the newer fleetmesh, or start from a fresh --data-dir (or --store).',
    });
  }
  await sql.migrate(MIGRATIONS);
}

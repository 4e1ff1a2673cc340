import { type SqlEngine, writeInBatches } from './sql-engine.ts';

export type AgentState = 'online' | 'stale' | 'offline';

/** What an agent said of itself in its last Hello, kept so offline agents still list their collectors. */
export interface StoredHello {
  agent_version: string;
  protocol_version: number;
  actions: string[];
  /** `absent`: nothing to collect on this host (not a failure). */
  collectors: { name: string; available: boolean; reason: string; absent?: boolean }[];
  facts: Record<string, string | number | boolean>;
  started_unix_ms: number;
}

export interface AgentRow {
  id: string;
  name: string;
  tokenLabels: Record<string, string>;
  reportedLabels: Record<string, string>;
  publicKeySha256: string;
  enrolledAt: number;
  lastSeenAt: number | null;
  state: AgentState;
  version: string;
  hello: StoredHello | null;
  certSerial: string | null;
  certNotAfter: number | null;
  revokedAt: number | null;
  revokedReason: string | null;
}

interface RawAgentRow {
  id: string;
  name: string;
  token_labels_json: string;
  reported_labels_json: string;
  public_key_sha256: string;
  enrolled_at: number;
  last_seen_at: number | null;
  state: AgentState;
  version: string;
  hello_json: string | null;
  cert_serial: string | null;
  cert_not_after: number | null;
  revoked_at: number | null;
  revoked_reason: string | null;
}

function fromRaw(raw: RawAgentRow): AgentRow {
  return {
    id: raw.id,
    name: raw.name,
    tokenLabels: JSON.parse(raw.token_labels_json) as Record<string, string>,
    reportedLabels: JSON.parse(raw.reported_labels_json) as Record<string, string>,
    publicKeySha256: raw.public_key_sha256,
    enrolledAt: raw.enrolled_at,
    lastSeenAt: raw.last_seen_at,
    state: raw.state,
    version: raw.version,
    hello: raw.hello_json ? (JSON.parse(raw.hello_json) as StoredHello) : null,
    certSerial: raw.cert_serial,
    certNotAfter: raw.cert_not_after,
    revokedAt: raw.revoked_at,
    revokedReason: raw.revoked_reason,
  };
}

/** Labels as the fleet sees them: what the agent reports, overridden by what its join token assigned. */
export function effectiveLabels(row: Pick<AgentRow, 'tokenLabels' | 'reportedLabels'>): Record<string, string> {
  return { ...row.reportedLabels, ...row.tokenLabels };
}

/** Agents per last-seen statement: 1,000 parameters. */
const TOUCH_ROWS = 500;

export class AgentsTable {
  constructor(private readonly sql: SqlEngine) {}

  async insert(row: {
    id: string;
    name: string;
    tokenLabels: Record<string, string>;
    publicKeySha256: string;
    enrolledAt: number;
    tokenId: string;
  }): Promise<void> {
    await this.sql.run(
      `INSERT INTO agents (id, name, token_labels_json, public_key_sha256, enrolled_at, enrolled_with_token)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [row.id, row.name, JSON.stringify(row.tokenLabels), row.publicKeySha256, row.enrolledAt, row.tokenId],
    );
  }

  /** An agent re-enrolling from its own data dir: same id, fresh token labels and name. */
  async reenroll(
    id: string,
    fields: { name: string; tokenLabels: Record<string, string>; publicKeySha256: string; tokenId: string; now: number },
  ): Promise<void> {
    await this.sql.run('UPDATE agents SET name = ?, token_labels_json = ?, public_key_sha256 = ?, enrolled_with_token = ?, enrolled_at = ? WHERE id = ?', [
      fields.name,
      JSON.stringify(fields.tokenLabels),
      fields.publicKeySha256,
      fields.tokenId,
      fields.now,
      id,
    ]);
  }

  async get(id: string): Promise<AgentRow | undefined> {
    const raw = await this.sql.get<RawAgentRow>('SELECT * FROM agents WHERE id = ?', [id]);
    return raw ? fromRaw(raw) : undefined;
  }

  /** The unrevoked agent holding a name (names compare case-insensitively). */
  async findLiveByName(name: string): Promise<AgentRow | undefined> {
    const raw = await this.sql.get<RawAgentRow>('SELECT * FROM agents WHERE lower(name) = lower(?) AND revoked_at IS NULL', [name]);
    return raw ? fromRaw(raw) : undefined;
  }

  async list(options: { includeRevoked: boolean } = { includeRevoked: false }): Promise<AgentRow[]> {
    const sql = options.includeRevoked ? 'SELECT * FROM agents ORDER BY name' : 'SELECT * FROM agents WHERE revoked_at IS NULL ORDER BY name';
    return (await this.sql.all<RawAgentRow>(sql)).map(fromRaw);
  }

  async setCertificate(id: string, serial: string, notAfter: number, publicKeySha256: string): Promise<void> {
    await this.sql.run('UPDATE agents SET cert_serial = ?, cert_not_after = ?, public_key_sha256 = ? WHERE id = ?', [serial, notAfter, publicKeySha256, id]);
  }

  async recordHello(id: string, fields: { version: string; hello: StoredHello; reportedLabels: Record<string, string>; now: number }): Promise<void> {
    await this.sql.run("UPDATE agents SET state = 'online', version = ?, hello_json = ?, reported_labels_json = ?, last_seen_at = ? WHERE id = ?", [
      fields.version,
      JSON.stringify(fields.hello),
      JSON.stringify(fields.reportedLabels),
      fields.now,
      id,
    ]);
  }

  /**
   * Records the states of many agents at once, at most TOUCH_ROWS to a
   * statement: a broker that counts another gone marks thousands of agents
   * offline, and one statement each held a connection and their rows for as
   * long as it took.
   */
  async setStates(changes: ReadonlyMap<string, { state: AgentState; lastSeenAt: number | null }>): Promise<void> {
    await writeInBatches([...changes], TOUCH_ROWS, (chunk) =>
      this.sql.run(
        `UPDATE agents SET state = v.column2, last_seen_at = COALESCE(CAST(v.column3 AS BIGINT), agents.last_seen_at)
         FROM (VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')}) AS v WHERE agents.id = v.column1`,
        chunk.flatMap(([id, change]) => [id, change.state, change.lastSeenAt]),
      ),
    );
  }

  /**
   * Records last-seen times for many agents (every connected one, each
   * heartbeat interval): at most TOUCH_ROWS agents to a statement
   * (writeInBatches).
   */
  async touch(seen: ReadonlyMap<string, number>): Promise<void> {
    // A VALUES list's columns are column1, column2… on both engines; PostgreSQL reads its parameters as text.
    await writeInBatches([...seen], TOUCH_ROWS, (chunk) =>
      this.sql.run(
        `UPDATE agents SET last_seen_at = CAST(v.column2 AS BIGINT)
         FROM (VALUES ${chunk.map(() => '(?, ?)').join(', ')}) AS v WHERE agents.id = v.column1`,
        chunk.flat(),
      ),
    );
  }

  /** At broker start nobody is connected yet, whatever the last run left behind. */
  async markAllOffline(): Promise<void> {
    await this.sql.run("UPDATE agents SET state = 'offline' WHERE state != 'offline'");
  }

  async markRevoked(id: string, reason: string, now: number): Promise<void> {
    await this.sql.run("UPDATE agents SET revoked_at = ?, revoked_reason = ?, state = 'offline' WHERE id = ?", [now, reason, id]);
  }
}

import { IN_LIST_MAX, placeholders, type SqlEngine, writeInBatches } from './sql-engine.ts';

/**
 * What a 2025-era MCP session is, apart from its connection: enough for any
 * broker sharing the store to serve it again without a new initialize.
 * Nothing here is secret: a request naming the session still needs a bearer
 * token of `identityId`.
 */
export interface McpSessionRow {
  sessionId: string;
  identityId: string;
  /** The version the client asked for in initialize: the server negotiates the same one from it again. */
  protocolVersion: string;
  clientInfo: unknown;
  clientCapabilities: unknown;
  /** What `logging/setLevel` last asked for, if anything. */
  logLevel: string | null;
  /** The resource URIs the session is subscribed to. */
  subscriptions: string[];
  /** The broker process serving the session now; any other one that still has it open closes its copy. */
  heldBy: string;
  createdAt: number;
  lastUsedAt: number;
}

interface RawRow {
  session_id: string;
  identity_id: string;
  protocol_version: string;
  client_info_json: string;
  client_capabilities_json: string;
  log_level: string | null;
  subscriptions_json: string;
  held_by: string;
  created_at: number | string;
  last_used_at: number | string;
}

function fromRaw(row: RawRow): McpSessionRow {
  return {
    sessionId: row.session_id,
    identityId: row.identity_id,
    protocolVersion: row.protocol_version,
    clientInfo: JSON.parse(row.client_info_json),
    clientCapabilities: JSON.parse(row.client_capabilities_json),
    logLevel: row.log_level,
    subscriptions: JSON.parse(row.subscriptions_json) as string[],
    heldBy: row.held_by,
    createdAt: Number(row.created_at),
    lastUsedAt: Number(row.last_used_at),
  };
}

/** 2025-era MCP sessions, shared by every broker on the store (a single broker's survive its restart). */
export class McpSessionsTable {
  constructor(private readonly sql: SqlEngine) {}

  async insert(row: Omit<McpSessionRow, 'logLevel' | 'subscriptions'>): Promise<void> {
    await this.sql.run(
      `INSERT INTO mcp_sessions (session_id, identity_id, protocol_version, client_info_json, client_capabilities_json, held_by, created_at, last_used_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.sessionId,
        row.identityId,
        row.protocolVersion,
        JSON.stringify(row.clientInfo ?? {}),
        JSON.stringify(row.clientCapabilities ?? {}),
        row.heldBy,
        row.createdAt,
        row.lastUsedAt,
      ],
    );
  }

  /** The session, if it was used since `usedSince`. */
  async get(sessionId: string, usedSince: number): Promise<McpSessionRow | undefined> {
    const row = await this.sql.get<RawRow>('SELECT * FROM mcp_sessions WHERE session_id = ? AND last_used_at > ?', [sessionId, usedSince]);
    return row && fromRaw(row);
  }

  /** Records that `heldBy` serves the session from now; resolves false when it is gone. */
  async take(sessionId: string, heldBy: string, now: number): Promise<boolean> {
    return (await this.sql.run('UPDATE mcp_sessions SET held_by = ?, last_used_at = ? WHERE session_id = ?', [heldBy, now, sessionId])) > 0;
  }

  /**
   * The sessions served by another broker than `heldBy` and taken over or
   * used at or after `sinceMs` (a take-over writes the time too): a broker
   * still serving one of them lets it go. Read through the last-use index, so
   * a round costs the rows written since, not one per session open.
   */
  async movedSince(heldBy: string, sinceMs: number): Promise<string[]> {
    const rows = await this.sql.all<{ session_id: string }>('SELECT session_id FROM mcp_sessions WHERE last_used_at >= ? AND held_by <> ?', [sinceMs, heldBy]);
    return rows.map((row) => row.session_id);
  }

  async setSubscriptions(sessionId: string, uris: readonly string[]): Promise<void> {
    await this.sql.run('UPDATE mcp_sessions SET subscriptions_json = ? WHERE session_id = ?', [JSON.stringify(uris), sessionId]);
  }

  async setLogLevel(sessionId: string, level: string): Promise<void> {
    await this.sql.run('UPDATE mcp_sessions SET log_level = ? WHERE session_id = ?', [level, sessionId]);
  }

  async touch(sessionId: string, now: number): Promise<void> {
    await this.sql.run('UPDATE mcp_sessions SET last_used_at = ? WHERE session_id = ? AND last_used_at < ?', [now, sessionId, now]);
  }

  async delete(sessionIds: readonly string[]): Promise<void> {
    await writeInBatches(sessionIds, IN_LIST_MAX, (batch) =>
      this.sql.run(`DELETE FROM mcp_sessions WHERE session_id IN (${placeholders(batch.length)})`, batch),
    );
  }

  /** Deletes the sessions idle since `usedBefore` and those of identities revoked or expired, whichever broker held them. */
  async prune(usedBefore: number, now: number): Promise<void> {
    await this.sql.run(
      `DELETE FROM mcp_sessions WHERE last_used_at <= ?
         OR identity_id NOT IN (SELECT id FROM identities WHERE revoked_at IS NULL AND expires_at > ?)`,
      [usedBefore, now],
    );
  }
}

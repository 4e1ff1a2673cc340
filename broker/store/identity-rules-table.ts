import type { Level } from '../../shared/catalog/action.ts';
import type { ToolGlobs } from '../auth/tool-filter.ts';
import type { SqlEngine } from './sql-engine.ts';

/** What a person's token must say for a rule to map them; every condition given must hold. */
export interface RuleMatch {
  /** Their subject at the issuer (a glob). */
  subject?: string;
  /** Their email (a glob, any case), such as *@example.com. */
  email?: string;
  /** A group their `groups` claim names. */
  group?: string;
  /** Other claims, each equal to the value given (or, for a list, holding it). */
  claims?: Record<string, string>;
}

export interface IdentityRuleRow {
  id: string;
  /** Rules are tried in this order; the first that matches decides. */
  position: number;
  /** The issuer that knows the people it maps. */
  issuer: string;
  match: RuleMatch;
  level: Level;
  grants: string[];
  tools: ToolGlobs;
  createdAt: number;
}

interface RawRuleRow {
  id: string;
  position: number;
  issuer: string;
  match_json: string;
  level: number;
  grants_json: string;
  tools_json: string;
  created_at: number;
}

const fromRaw = (raw: RawRuleRow): IdentityRuleRow => ({
  id: raw.id,
  position: Number(raw.position),
  issuer: raw.issuer,
  match: JSON.parse(raw.match_json) as RuleMatch,
  level: Number(raw.level) as Level,
  grants: JSON.parse(raw.grants_json) as string[],
  tools: JSON.parse(raw.tools_json) as ToolGlobs,
  createdAt: Number(raw.created_at),
});

/** The operator's rules mapping people signed in through OAuth to a level, grants and tools (`fleetmesh identity map`). */
export class IdentityRulesTable {
  constructor(private readonly sql: SqlEngine) {}

  /** Every rule, in the order they are tried. */
  async list(): Promise<IdentityRuleRow[]> {
    return (await this.sql.all<RawRuleRow>('SELECT * FROM identity_rules ORDER BY position, created_at')).map(fromRaw);
  }

  /** Adds a rule after the others. */
  async add(row: Omit<IdentityRuleRow, 'position'>): Promise<IdentityRuleRow> {
    const last = await this.sql.get<{ position: number | null }>('SELECT MAX(position) AS position FROM identity_rules');
    const position = Number(last?.position ?? 0) + 1;
    await this.sql.run(
      'INSERT INTO identity_rules (id, position, issuer, match_json, level, grants_json, tools_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [row.id, position, row.issuer, JSON.stringify(row.match), row.level, JSON.stringify(row.grants), JSON.stringify(row.tools), row.createdAt],
    );
    return { ...row, position };
  }

  /** Removes a rule: the people it mapped are refused at their next request, unless another rule maps them. */
  async remove(id: string): Promise<boolean> {
    return (await this.sql.run('DELETE FROM identity_rules WHERE id = ?', [id])) > 0;
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Level } from '../../shared/catalog/action.ts';
import { FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import { createIdentityAs, revokeIdentityAs } from '../admin/identity-admin.ts';
import { createJoinTokenAs, revokeJoinTokenAs } from '../admin/join-token-admin.ts';
import { FULL_ACCESS } from '../auth/grants.ts';
import { auditPeopleOf, type Identity } from '../auth/identities.ts';
import type { RefusalAudit } from '../calls/refusal-audit.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { readJson, sendError, sendJson, statusOf } from './web-json.ts';

export interface ConsoleAdminOptions {
  store: BrokerStore;
  refusals: RefusalAudit;
  /** What an agent needs to enroll with a token: the CA pin to give it now, and the address it dials. */
  enrollment: () => Promise<{ caPin: string; agentAddress: string }>;
  bodyTimeoutMs: number;
}

const ROUTE = /^(GET|POST) \/api\/admin\/(tokens|identities)(?:\/([^/]+)\/(revoke))?$/;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

function positive(value: unknown, name: string, max: number): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new FleetError('invalid_argument', `${name} must be a whole number from 1 to ${max}`);
  }
  return value;
}

function stringRecord(value: unknown, name: string): Record<string, string> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new FleetError('invalid_argument', `${name} must be an object of strings`);
  }
  return value as Record<string, string>;
}

function stringList(value: unknown, name: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new FleetError('invalid_argument', `${name} must be a list of strings`);
  return (value as string[]).map((v) => v.trim()).filter((v) => v !== '');
}

/**
 * The console's screens for the broker's own records: join tokens and MCP
 * client identities, listed, created and revoked by level-3 identities through
 * the same functions as `fleetmesh token …` and `fleetmesh identity …`, which
 * write the same audit rows. Any other identity is answered as if these did
 * not exist (as the audit is), and its attempt is audited as a refusal: the
 * server refuses, whatever the page shows.
 */
export class ConsoleAdmin {
  constructor(private readonly options: ConsoleAdminOptions) {}

  /** Answers `route` when it is one of these screens' (true), else leaves it to the caller (false). */
  async handle(route: string, req: IncomingMessage, res: ServerResponse, identity: Identity): Promise<boolean> {
    const match = ROUTE.exec(route);
    if (!match) return false;
    const [, method, kind, id, revoke] = match;
    if (identity.level !== 3) {
      await this.options.refusals.record({
        identity: identity.name,
        people: auditPeopleOf(identity),
        tool: route,
        level: 3,
        errorCode: 'not_found',
        reason: `the console's ${kind} are for level-3 identities and this one is level ${identity.level}; answered as an unknown API`,
      });
      sendError(res, 404, new FleetError('not_found', `no such console API: ${route}`));
      return true;
    }
    const actor = { name: identity.name, people: auditPeopleOf(identity) };
    try {
      if (method === 'GET' && !id) sendJson(res, 200, { rows: kind === 'tokens' ? await this.tokens() : await this.identities() });
      else if (method === 'POST' && revoke && id) {
        const wanted = decodeURIComponent(id);
        if (kind === 'tokens') sendJson(res, 200, { revoked: await revokeJoinTokenAs(this.options.store, actor, wanted) });
        else sendJson(res, 200, { revoked: (await revokeIdentityAs(this.options.store, actor, wanted)).name });
      } else if (method === 'POST' && !id) {
        const body = await readJson(req, this.options.bodyTimeoutMs);
        sendJson(res, 200, kind === 'tokens' ? await this.createToken(actor, body) : await this.createIdentity(identity, actor, body));
      } else sendError(res, 404, new FleetError('not_found', `no such console API: ${route}`));
    } catch (error) {
      const failure = toFleetError(error);
      sendError(res, statusOf(failure), failure);
    }
    return true;
  }

  private async tokens(): Promise<Record<string, unknown>[]> {
    const now = Date.now();
    return (await this.options.store.tokens.list()).map((t) => ({
      token_id: t.id,
      status: t.revokedAt !== null ? 'revoked' : t.expiresAt <= now ? 'expired' : t.usesAllowed !== null && t.uses >= t.usesAllowed ? 'used up' : 'usable',
      uses: t.uses,
      uses_allowed: t.usesAllowed,
      created_at_unix_ms: t.createdAt,
      expires_at_unix_ms: t.expiresAt,
      labels: t.labels,
      roles: t.roles,
    }));
  }

  private async identities(): Promise<Record<string, unknown>[]> {
    return (await this.options.store.identities.list()).map((i) => ({
      id: i.id,
      name: i.name,
      kind: i.kind,
      level: i.level,
      grants: i.grants,
      expires_at_unix_ms: i.expiresAt,
      last_used_at_unix_ms: i.lastUsedAt,
    }));
  }

  /** `{ttl_hours?, uses? | reusable?, labels?}`: the token once, with the agent command line that uses it, as `fleetmesh token create` prints. */
  private async createToken(actor: { name: string }, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const ttlHours = positive(body.ttl_hours, 'ttl_hours', 24 * 365) ?? 1;
    const uses = positive(body.uses, 'uses', 1_000_000);
    if (body.reusable === true && uses !== undefined) throw new FleetError('invalid_argument', 'uses and reusable cannot be combined');
    const created = await createJoinTokenAs(this.options.store, actor, {
      ttlMs: ttlHours * HOUR_MS,
      uses: body.reusable === true ? null : (uses ?? 1),
      labels: stringRecord(body.labels, 'labels'),
    });
    const { caPin: pin, agentAddress: broker } = await this.options.enrollment();
    return {
      token: created.token,
      token_id: created.id,
      ca_pin: pin,
      broker,
      expires_at_unix_ms: created.expiresAt,
      uses_allowed: created.usesAllowed,
      labels: created.labels,
      agent_command: `fleetmesh agent --broker ${broker} --token ${created.token} --ca-pin ${pin}`,
    };
  }

  /**
   * `{name, level, grants?, ttl_days?}`: the bearer token once. Only an
   * identity that holds every grant and has no tool switched off may make
   * one, so that no identity makes another that reaches further than itself.
   */
  private async createIdentity(identity: Identity, actor: { name: string }, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (identity.grants.texts.join(' ') !== FULL_ACCESS.join(' ') || (identity.tools?.describe() ?? '') !== '') {
      throw new FleetError(
        'forbidden',
        `${identity.name} holds narrower grants than ${FULL_ACCESS.join(' ')}, or has tools switched off: it may not create identities`,
        {
          hint: 'An identity with every grant, or the operator at the broker (fleetmesh identity create), can.',
        },
      );
    }
    const level = body.level;
    if (typeof body.name !== 'string' || typeof level !== 'number' || ![0, 1, 2, 3].includes(level)) {
      throw new FleetError('invalid_argument', 'an identity is {name: string, level: 0..3, grants?: [string], ttl_days?: number}');
    }
    const ttlDays = positive(body.ttl_days, 'ttl_days', 3650);
    const { token, row } = await createIdentityAs(this.options.store, actor, {
      name: body.name.trim(),
      level: level as Level,
      grants: stringList(body.grants, 'grants'),
      ...(ttlDays !== undefined ? { ttlMs: ttlDays * DAY_MS } : {}),
    });
    return { name: row.name, id: row.id, level: row.level, grants: row.grants, expires_at_unix_ms: row.expiresAt, token };
  }
}

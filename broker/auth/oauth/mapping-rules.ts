import type { IdentityRuleRow, RuleMatch } from '../../store/identity-rules-table.ts';
import type { AccessTokenClaims } from './access-token-claims.ts';

function glob(pattern: string, flags = ''): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${escaped}$`, flags);
}

function claimHolds(value: unknown, wanted: string): boolean {
  if (Array.isArray(value)) return value.some((item) => String(item) === wanted);
  return value !== undefined && value !== null && String(value) === wanted;
}

/** Whether a person's claims meet every condition of a rule's match. */
export function matches(match: RuleMatch, claims: AccessTokenClaims): boolean {
  if (match.subject !== undefined && !glob(match.subject).test(claims.subject)) return false;
  if (match.email !== undefined && (claims.email === undefined || !glob(match.email, 'i').test(claims.email))) return false;
  if (match.group !== undefined && !claims.groups.includes(match.group)) return false;
  return Object.entries(match.claims ?? {}).every(([name, wanted]) => claimHolds(claims.all[name], wanted));
}

/** The first rule, in order, for the issuer that knows the person and matching their claims; none lets them in for nothing. */
export function firstMatch(rules: readonly IdentityRuleRow[], claims: AccessTokenClaims): IdentityRuleRow | undefined {
  return rules.find((rule) => rule.issuer === claims.personIssuer && matches(rule.match, claims));
}

/** A rule's conditions in words, for listings. */
export function describeMatch(match: RuleMatch): string {
  const parts = [
    match.subject !== undefined ? `subject ${match.subject}` : undefined,
    match.email !== undefined ? `email ${match.email}` : undefined,
    match.group !== undefined ? `group ${match.group}` : undefined,
    ...Object.entries(match.claims ?? {}).map(([name, value]) => `${name}=${value}`),
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'anyone';
}

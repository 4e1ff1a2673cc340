import { HOST_SCOPED_TYPES, RESOURCE_TYPES } from '../../shared/domains/resource-types.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';

/**
 * Grants say which resources an identity may see (read) and change (write):
 * `KIND:PATTERN[=read|write]`, such as `host:web-*`, `container:web-1/nginx*=write`
 * or `*:*=write`. Patterns are globs (`*`, `?`). Resources that live on a host
 * are named `HOST/NAME`; a grant on a host covers everything on it.
 */
type Access = 'read' | 'write';

export interface Grant {
  kind: string;
  pattern: string;
  access: Access;
  /** The grant as written. */
  text: string;
}

/** Kinds of resource whose names are `HOST/NAME`, as the domains declare their types. */
const HOST_SCOPED = new Set<string>(HOST_SCOPED_TYPES);
const KINDS = new Set<string>(['*', ...RESOURCE_TYPES]);

export const FULL_ACCESS = ['*:*=write'];

export function parseGrant(text: string): Grant {
  const match = /^([a-z*]+):([^=\s]+)(?:=(read|write))?$/.exec(text.trim());
  if (!match || !KINDS.has(match[1] ?? '')) {
    throw new FleetError('invalid_argument', `"${text}" is not a grant`, {
      hint: `Write grants as KIND:PATTERN[=read|write], such as host:web-* or container:web-1/nginx*=write; kinds: ${[...KINDS].join(', ')}.`,
    });
  }
  return { kind: match[1] ?? '', pattern: match[2] ?? '', access: (match[3] as Access | undefined) ?? 'read', text: text.trim() };
}

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${escaped}$`, 'i');
}

interface CompiledGrant extends Grant {
  matches(name: string): boolean;
  /** For host-scoped kinds: whether the grant can cover anything on this host. */
  coversHost(host: string): boolean;
}

function compile(grant: Grant): CompiledGrant {
  const full = globToRegExp(grant.pattern);
  const slash = grant.pattern.indexOf('/');
  const hostPart = slash >= 0 ? globToRegExp(grant.pattern.slice(0, slash)) : /^.*$/;
  const scoped = HOST_SCOPED.has(grant.kind);
  return {
    ...grant,
    matches: (name) => (scoped && slash < 0 ? full.test(name.slice(name.indexOf('/') + 1)) : full.test(name)),
    coversHost: (host) => hostPart.test(host),
  };
}

/** An identity's grants, ready to answer "may it see / change this?". */
export class GrantSet {
  private readonly grants: CompiledGrant[];

  constructor(texts: readonly string[]) {
    this.grants = texts.map((text) => compile(parseGrant(text)));
  }

  get texts(): string[] {
    return this.grants.map((g) => g.text);
  }

  private allows(access: Access, test: (grant: CompiledGrant) => boolean): boolean {
    return this.grants.some((grant) => (access === 'read' || grant.access === 'write') && test(grant));
  }

  /** Whether the identity may see (read) or act on (write) a host as a whole. */
  host(host: string, access: Access = 'read'): boolean {
    return this.allows(access, (g) => (g.kind === 'host' || g.kind === '*') && g.matches(host));
  }

  /** Whether any of the identity's grants reaches into this host (a host grant, or one on a resource that lives there). */
  reachesHost(host: string, access: Access = 'read'): boolean {
    return this.host(host, access) || this.allows(access, (g) => HOST_SCOPED.has(g.kind) && g.coversHost(host));
  }

  /** Whether a grant reaches resources that belong to no one host (a cluster's): any agent may then serve what it sees. */
  reachesBeyondHosts(): boolean {
    return this.grants.some((g) => g.kind !== 'host' && !HOST_SCOPED.has(g.kind));
  }

  /** Whether the identity may see or change one resource. Host-scoped names are `HOST/NAME`. */
  resource(kind: string, name: string, access: Access = 'read'): boolean {
    if (kind === 'host') return this.host(name, access);
    if (HOST_SCOPED.has(kind)) {
      const host = name.slice(0, name.indexOf('/'));
      if (this.host(host, access)) return true;
    }
    return this.allows(access, (g) => (g.kind === kind || g.kind === '*') && g.matches(name));
  }

  /** Whether the identity may change anything at all (write tools are hidden otherwise). */
  writesAnything(): boolean {
    return this.grants.some((g) => g.access === 'write');
  }
}

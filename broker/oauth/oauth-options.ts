import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { FlagSpec, FlagValues } from '../../shared/options/command-line.ts';
import { readSecretFile } from '../../shared/options/secret-file.ts';
import type { IntrospectionOptions } from '../auth/oauth/token-introspection.ts';

/** `off`: identity tokens only; `builtin`: the broker's own authorization server; `external`: an OpenID provider the operator runs. */
export type OAuthMode = 'off' | 'builtin' | 'external';

/** An OpenID provider the built-in server signs people in through, and the client it knows the broker as. */
export interface UpstreamOptions {
  issuer: string;
  clientId: string;
  /** Undefined for a public client (PKCE alone). */
  clientSecret: string | undefined;
  scopes: string[];
}

/** Everything OAuth needs, resolved once. */
export interface OAuthOptions {
  mode: OAuthMode;
  /** The external provider's issuer; the built-in server's is the MCP origin's `/oauth`, known once the broker listens. */
  issuer: string | undefined;
  /** Scopes every access token must carry. */
  requiredScopes: string[];
  /** How far a token's `exp` and `nbf` may be off. */
  clockSkewS: number;
  /** How long an issuer's keys are believed, and how often a token naming an unknown key may fetch them again. */
  jwksMaxAgeMs: number;
  jwksCooldownMs: number;
  /** Opaque tokens of the external provider, asked about at its introspection endpoint. */
  introspection: IntrospectionOptions | undefined;
  /** The built-in server's access tokens live this long; its refresh tokens this long unused. */
  accessTokenTtlS: number;
  refreshTokenTtlS: number;
  upstream: UpstreamOptions | undefined;
}

export const OAUTH_FLAGS = {
  oauth: {
    type: 'string',
    description:
      'how MCP clients sign in besides identity tokens: off, builtin (the broker authorizes people itself; needs --web-listen, whose pages sign them in), or the https issuer URL of an OpenID provider to trust',
    default: 'off',
    placeholder: 'off|builtin|URL',
  },
  'oauth-scopes': {
    type: 'list',
    description: 'scopes every access token must carry (default: fleet with builtin, none with a provider)',
    default: [],
    placeholder: 'SCOPE,…',
  },
  'oauth-introspection-url': {
    type: 'string',
    description: "the provider's token introspection endpoint, for access tokens that are not JWTs (with --oauth-client-id)",
    placeholder: 'URL',
  },
  'oauth-client-id': { type: 'string', description: "the broker's client at the provider, for introspection", placeholder: 'ID' },
  'oauth-client-secret-file': { type: 'string', description: 'a file holding the secret of --oauth-client-id', placeholder: 'FILE' },
  'oauth-token-ttl': {
    type: 'duration',
    description: "how long the built-in server's access tokens live (clients renew them with their refresh token)",
    default: '10m',
    min: 60_000,
    max: 86_400_000,
    placeholder: 'DURATION',
  },
  'oauth-upstream': {
    type: 'string',
    description: 'an OpenID provider the built-in server also signs people in through (its issuer URL); mapping rules then say what they may do',
    placeholder: 'URL',
  },
  'oauth-upstream-client-id': { type: 'string', description: 'the client --oauth-upstream knows the broker as', placeholder: 'ID' },
  'oauth-upstream-client-secret-file': {
    type: 'string',
    description: 'a file holding the secret of --oauth-upstream-client-id (without it, a public client with PKCE)',
    placeholder: 'FILE',
  },
  'oauth-upstream-scopes': {
    type: 'list',
    description: 'the scopes asked of --oauth-upstream',
    default: ['openid', 'email', 'profile'],
    placeholder: 'SCOPE,…',
  },
} as const satisfies Record<string, FlagSpec>;

/** What a broker without OAuth has (and the base of one started in-process). */
export const OAUTH_OFF: OAuthOptions = {
  mode: 'off',
  issuer: undefined,
  requiredScopes: [],
  clockSkewS: 30,
  jwksMaxAgeMs: 10 * 60_000,
  jwksCooldownMs: 30_000,
  introspection: undefined,
  accessTokenTtlS: 600,
  refreshTokenTtlS: 14 * 86_400,
  upstream: undefined,
};

/** The built-in server's scope: what its tokens carry and what the broker then asks for. */
export const BUILTIN_SCOPE = 'fleet';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An issuer URL: https, or http on a loopback address only (a provider on this machine), written as the provider writes it. */
export function parseIssuerUrl(value: string, flag: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname))) || url.search || url.hash) {
    throw new FleetError('invalid_argument', `${flag} ${JSON.stringify(value)} is not an issuer URL`, {
      hint: 'Give the https URL the provider names as its issuer (http only on localhost), without query or fragment.',
    });
  }
  // Kept exactly as given: an issuer is compared as a string, trailing slash and all.
  return value;
}

function needs(value: string | undefined, flag: string, wanted: string): string {
  if (value === undefined) throw new FleetError('invalid_argument', `${wanted} needs ${flag}`, { hint: `Give ${flag} as well.` });
  return value;
}

export function resolveOAuthOptions(values: FlagValues<typeof OAUTH_FLAGS>, webConsole: boolean): OAuthOptions {
  const given = values.oauth.trim();
  const mode: OAuthMode = given === 'off' || given === 'builtin' ? given : 'external';
  const issuer = mode === 'external' ? parseIssuerUrl(given, '--oauth') : undefined;
  if (mode === 'builtin' && !webConsole) {
    throw new FleetError('invalid_argument', '--oauth builtin needs the web console, whose pages sign people in', {
      hint: 'Give --web-listen HOST:PORT as well (fleetmesh up has it on 127.0.0.1:7480).',
    });
  }
  const introspectionUrl = values['oauth-introspection-url'];
  const upstream = values['oauth-upstream'];
  if (mode !== 'external' && introspectionUrl !== undefined) {
    throw new FleetError('invalid_argument', '--oauth-introspection-url is for a provider given with --oauth URL', { hint: 'Give --oauth the issuer URL.' });
  }
  if (mode !== 'builtin' && upstream !== undefined) {
    throw new FleetError('invalid_argument', '--oauth-upstream is for the built-in server', { hint: 'Give --oauth builtin, or --oauth the provider itself.' });
  }
  const secret = (flag: 'oauth-client-secret-file' | 'oauth-upstream-client-secret-file') => {
    const file = values[flag];
    return file === undefined ? undefined : readSecretFile(file, `--${flag}`);
  };
  return {
    ...OAUTH_OFF,
    mode,
    issuer,
    requiredScopes: values['oauth-scopes'].length ? values['oauth-scopes'] : mode === 'builtin' ? [BUILTIN_SCOPE] : [],
    accessTokenTtlS: Math.round(values['oauth-token-ttl'] / 1000),
    introspection:
      introspectionUrl === undefined
        ? undefined
        : {
            url: parseIssuerUrl(introspectionUrl, '--oauth-introspection-url'),
            clientId: needs(values['oauth-client-id'], '--oauth-client-id', '--oauth-introspection-url'),
            clientSecret: needs(secret('oauth-client-secret-file'), '--oauth-client-secret-file', '--oauth-introspection-url'),
          },
    upstream:
      upstream === undefined
        ? undefined
        : {
            issuer: parseIssuerUrl(upstream, '--oauth-upstream'),
            clientId: needs(values['oauth-upstream-client-id'], '--oauth-upstream-client-id', '--oauth-upstream'),
            clientSecret: secret('oauth-upstream-client-secret-file'),
            scopes: values['oauth-upstream-scopes'],
          },
  };
}

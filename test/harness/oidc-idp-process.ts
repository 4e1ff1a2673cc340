// An OpenID provider of its own, run as a separate process by test/harness/oidc-idp.ts: the
// external identity provider a broker trusts (`--oauth URL`) or signs people in through
// (`--oauth-upstream URL`). oidc-provider with its own RSA key, its own people, dynamic
// registration, and access tokens as JWTs for the resource a client names.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type ClientMetadata } from 'oidc-provider';

interface Person {
  email: string;
  groups: string[];
}

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    people: { type: 'string', default: '{}' },
    clients: { type: 'string', default: '[]' },
  },
});
const port = Number(values.port);
const issuer = `http://127.0.0.1:${port}`;
const people = JSON.parse(values.people ?? '{}') as Record<string, Person>;
const clients = JSON.parse(values.clients ?? '[]') as ClientMetadata[];

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signing = { ...(await exportJWK(privateKey)), kid: `idp-${port}`, alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  jwks: { keys: [signing] },
  clients,
  clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], id_token_signed_response_alg: 'RS256' },
  responseTypes: ['code'],
  pkce: { required: () => true },
  scopes: ['openid', 'offline_access', 'email', 'groups', 'fleet'],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
  conformIdTokenClaims: false,
  cookies: { keys: ['idp-cookie-key-for-tests-only'] },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined as unknown as string,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => ({
        scope: 'fleet',
        audience: indicator,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 300,
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  findAccount: async (_ctx, sub) => {
    const person = people[sub];
    if (!person) return undefined;
    return { accountId: sub, claims: () => ({ sub, email: person.email, email_verified: true, groups: person.groups }) };
  },
  extraTokenClaims: async (_ctx, token) => {
    const person = 'accountId' in token ? people[token.accountId] : undefined;
    return person ? { email: person.email, groups: person.groups } : undefined;
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  ttl: { AccessToken: 300, AuthorizationCode: 60, IdToken: 300, Interaction: 600, Session: 3600, Grant: 3600, RefreshToken: 3600 },
});
const handler = provider.callback();

function page(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><head><title>Example IdP</title><link rel="icon" href="data:,"></head><body>${body}</body></html>`);
}

/** The provider's own sign-in page: a person's name, then every scope and resource asked for is granted at once. */
async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'GET') {
    page(
      res,
      200,
      '<h1>Example IdP sign-in</h1><form method="post"><input name="login" placeholder="who are you?"><button type="submit">Sign in at the IdP</button></form>',
    );
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const login = new URLSearchParams(Buffer.concat(chunks).toString()).get('login') ?? '';
  if (!people[login]) {
    page(res, 401, '<h1>Example IdP sign-in</h1><p class="error">no such person</p>');
    return;
  }
  const grant = new provider.Grant({ accountId: login, clientId: String(details.params.client_id) });
  grant.addOIDCScope(String(details.params.scope ?? 'openid'));
  grant.addOIDCClaims(['email', 'email_verified', 'groups']);
  const resource = details.params.resource;
  for (const indicator of Array.isArray(resource) ? resource : resource ? [resource] : []) grant.addResourceScope(String(indicator), 'fleet');
  await provider.interactionFinished(req, res, { login: { accountId: login }, consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: false });
}

const server = createServer((req, res) => {
  const work = req.url?.startsWith('/interaction/') ? interaction(req, res) : handler(req, res);
  Promise.resolve(work).catch((error: unknown) => page(res, 500, `<pre>${String((error as Error).message)}</pre>`));
});
server.listen(port, '127.0.0.1', () => process.stdout.write(`listening ${issuer}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

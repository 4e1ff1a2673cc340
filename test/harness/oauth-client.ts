import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Client,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';

/**
 * Where an OAuth client's browser comes back with its code: a loopback
 * listener, as a desktop MCP client runs one. `next()` resolves with the
 * query of the next visit (the code, or the error the server sent).
 */
export class CallbackListener {
  private server: Server | undefined;
  private waiting: ((query: URLSearchParams) => void) | undefined;
  private readonly arrived: URLSearchParams[] = [];
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      // A browser also asks for /favicon.ico: only the callback counts.
      if (url.pathname !== '/callback') {
        res.writeHead(404).end();
        return;
      }
      const query = url.searchParams;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>back in the client</title><link rel="icon" href="data:,"><p id="result">${query.has('code') ? 'signed in' : `refused: ${query.get('error')}`}</p>`,
      );
      if (this.waiting) this.waiting(query);
      else this.arrived.push(query);
      this.waiting = undefined;
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callback`;
    return this;
  }

  next(): Promise<URLSearchParams> {
    const ready = this.arrived.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve) ?? resolve(undefined));
  }
}

/**
 * What an MCP client with no token configured keeps of its OAuth sign-in, in
 * memory: the SDK's own flow does the rest (discovery through the protected
 * resource metadata, registration or a Client ID Metadata Document, PKCE, the
 * token and its refresh). The authorization URL the SDK would open in a
 * browser is kept for the test to open.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client: StoredOAuthClientInformation | undefined;
  stored: StoredOAuthTokens | undefined;
  verifier = '';
  discovery: OAuthDiscoveryState | undefined;
  /** The last URL the SDK sent the browser to. */
  authorizationUrl: URL | undefined;
  clientMetadataUrl: string | undefined;

  constructor(
    private readonly redirect: string,
    options: { name?: string; clientMetadataUrl?: string } = {},
  ) {
    this.name = options.name ?? 'fleetmesh test client';
    this.clientMetadataUrl = options.clientMetadataUrl;
  }

  private readonly name: string;

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(information: StoredOAuthClientInformation) {
    this.client = information;
  }

  tokens() {
    return this.stored;
  }

  saveTokens(tokens: StoredOAuthTokens) {
    this.stored = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery;
  }
}

/**
 * Connects a 2.x SDK client to `mcpUrl` the way an MCP client with no token
 * does: the first attempt is refused (401), the SDK finds the authorization
 * server and sends the browser there; `signIn` plays the person in the browser
 * and resolves with what came back to the callback; the SDK exchanges the
 * code, and the second attempt connects with the access token.
 */
export async function connectWithOAuth(
  mcpUrl: string,
  provider: MemoryOAuthProvider,
  signIn: (authorizationUrl: URL) => Promise<URLSearchParams>,
): Promise<Client> {
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  const refused = new Client({ name: 'fleetmesh-oauth-test', version: '2.0.0' });
  try {
    await refused.connect(first);
    return refused;
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || !provider.authorizationUrl) throw error;
  }
  const back = await signIn(provider.authorizationUrl);
  if (!back.get('code')) throw new Error(`the sign-in came back without a code: ${back.toString()}`);
  // With the issuer it came back with (RFC 9207), which the SDK checks against the one it was sent to.
  await first.finishAuth(back);
  await first.close();
  const client = new Client({ name: 'fleetmesh-oauth-test', version: '2.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
  return client;
}

import type { Client } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAUTH_OFF } from '../broker/oauth/oauth-options.ts';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { identityToken, mcpClient } from './harness/mcp-client.ts';
import { CallbackListener, connectWithOAuth, MemoryOAuthProvider } from './harness/oauth-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

interface ToolResult {
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

describe('the built-in authorization server, with a real SDK client and Chromium on the sign-in pages', () => {
  let fleet: TestFleet;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let callback: CallbackListener;
  let opsToken: string;
  let provider: MemoryOAuthProvider;
  let client: Client;

  /** A browser of its own: no one signed in to the authorization server yet. */
  const freshPage = async () => {
    page = await (await browser.newContext()).newPage();
    problems = watchProblems(page);
  };

  /** The person in the browser: signs in on the console's page with an identity token, then allows (or denies) the client. */
  const signInWith =
    (token: string, answer: 'Allow' | 'Deny' = 'Allow', shots?: string) =>
    async (authorizationUrl: URL) => {
      const back = callback.next();
      await page.goto(authorizationUrl.href);
      await page.waitForSelector('h1:has-text("Sign in to fleetmesh")');
      if (shots) await screenshot(page, `${shots}-sign-in`);
      await page.fill('input[name=token]', token);
      await page.click('button[type=submit]');
      await page.waitForSelector('h1:has-text("Let this client act as")');
      if (shots) await screenshot(page, `${shots}-consent`);
      await page.click(`button:has-text("${answer}")`);
      return back;
    };

  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 2, webListen: '127.0.0.1:0', oauth: { ...OAUTH_OFF, mode: 'builtin', requiredScopes: ['fleet'] } });
    await fleet.addAgent('oa-web-1');
    opsToken = await identityToken(fleet.broker, 3, ['host:oa-*=write'], 'oa-ops');
    callback = await new CallbackListener().start();
    browser = await launchChromium();
    await freshPage();
    provider = new MemoryOAuthProvider(callback.url);
    client = await connectWithOAuth(fleet.broker.mcpUrl, provider, signInWith(opsToken, 'Allow', 'oauth-builtin'));
  });

  afterAll(async () => {
    await client?.close();
    await browser?.close();
    await callback?.stop();
    await fleet?.stop();
  });

  it('takes an SDK client with no token through discovery, registration, sign-in, consent and PKCE to a tool call as the one who signed in', async () => {
    expect(provider.client?.client_id).toEqual(expect.any(String));
    const claims = decodeJwt(provider.stored?.access_token ?? '');
    expect(claims).toMatchObject({ iss: fleet.broker.oauth?.issuer, aud: fleet.broker.mcpUrl, scope: 'fleet', client_id: provider.client?.client_id });
    // Short-lived: ten minutes by default.
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(600);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    // The identity is level 3, the broker's operations level 2: its tokens get no more.
    expect(tools).toContain('set_agent_labels');
    expect(tools).not.toContain('docker_remove');
    const result = (await client.callTool({ name: 'set_agent_labels', arguments: { host: 'oa-web-1', labels: { tier: 'front' } } })) as ToolResult;
    expect(result.isError).toBeFalsy();
    const [row] = await fleet.broker.store.audit.recent({ limit: 1 });
    expect(row).toMatchObject({ identity: 'oa-ops', tool: 'set_agent_labels', outcome: 'ok', clientId: provider.client?.client_id, subject: claims.sub });
    expect(problems).toEqual([]);
  });

  it('keeps taking identity tokens beside access tokens', async () => {
    const plain = await mcpClient(fleet.broker, opsToken);
    expect((await plain.listTools()).tools.length).toBeGreaterThan(0);
    await plain.close();
  });

  it('rotates the refresh token at each use, and a refresh token used twice revokes the whole grant', async () => {
    const tokenEndpoint = `${fleet.broker.oauth?.issuer}/token`;
    const refresh = (refreshToken: string) =>
      fetch(tokenEndpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: provider.client?.client_id ?? '' }),
      });
    // The SDK refreshes by itself when the broker refuses its access token.
    const first = provider.stored?.refresh_token ?? '';
    provider.stored = { ...(provider.stored ?? { token_type: 'Bearer' }), access_token: 'no.longer.valid' };
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    const second = provider.stored?.refresh_token ?? '';
    expect(second).not.toBe(first);
    const replayed = await refresh(first);
    expect(replayed.status).toBe(400);
    expect(await replayed.json()).toMatchObject({ error: 'invalid_grant' });
    // The replay revoked the grant: the rotated token is refused too, and the client must sign in again.
    expect(await (await refresh(second)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a redirect URI the client did not register, without sending the browser there', async () => {
    const authorize = new URL(`${fleet.broker.oauth?.issuer}/auth`);
    authorize.search = new URLSearchParams({
      client_id: provider.client?.client_id ?? '',
      response_type: 'code',
      redirect_uri: 'http://127.0.0.1:9/elsewhere',
      scope: 'fleet',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const answer = await fetch(authorize, { redirect: 'manual' });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('location')).toBeNull();
    expect(await answer.text()).toMatch(/invalid_redirect_uri.*redirect_uri did not match any of the client/);
  });

  it('refuses an authorization request without PKCE, or with the plain method', async () => {
    const base = { client_id: provider.client?.client_id ?? '', response_type: 'code', redirect_uri: callback.url, scope: 'fleet' };
    for (const extra of [{}, { code_challenge: 'abc'.repeat(15), code_challenge_method: 'plain' }] as Record<string, string>[]) {
      const back = callback.next();
      const authorize = new URL(`${fleet.broker.oauth?.issuer}/auth`);
      authorize.search = new URLSearchParams({ ...base, ...extra }).toString();
      await page.goto(authorize.href);
      expect((await back).get('error')).toBe('invalid_request');
    }
  });

  it('tells the client access_denied when the person denies it, and refuses a wrong identity token on the page', async () => {
    await freshPage();
    const denied = new MemoryOAuthProvider(callback.url, { name: 'denied client' });
    await expect(
      connectWithOAuth(fleet.broker.mcpUrl, denied, async (url) => {
        const back = callback.next();
        await page.goto(url.href);
        await page.fill('input[name=token]', 'fmc1.0000000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
        await page.click('button[type=submit]');
        await page.waitForSelector('.error:has-text("Sign-in refused: the token is not known")');
        await screenshot(page, 'oauth-builtin-refused');
        await page.fill('input[name=token]', opsToken);
        await page.click('button[type=submit]');
        await page.click('button:has-text("Deny")');
        return back;
      }),
    ).rejects.toThrow(/access_denied/);
  });

  it('refuses the tokens of someone whose identity is revoked, at their very next request', async () => {
    await freshPage();
    const token = await identityToken(fleet.broker, 1, undefined, 'oa-short-lived');
    const own = new MemoryOAuthProvider(callback.url, { name: 'revoked later' });
    const revoked = await connectWithOAuth(fleet.broker.mcpUrl, own, signInWith(token));
    expect((await revoked.listTools()).tools.length).toBeGreaterThan(0);
    const row = await fleet.broker.store.identities.findLiveByName('oa-short-lived');
    await fleet.broker.store.identities.revoke(row?.id ?? '', Date.now());
    await expect(revoked.listTools()).rejects.toThrow();
    await revoked.close();
  });
});

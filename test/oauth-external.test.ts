import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAUTH_OFF } from '../broker/oauth/oauth-options.ts';
import { launchChromium, screenshot, watchProblems } from './harness/browser.ts';
import { runFleetmesh } from './harness/cli-process.ts';
import { freePort } from './harness/free-port.ts';
import { CallbackListener, connectWithOAuth, MemoryOAuthProvider } from './harness/oauth-client.ts';
import { type OidcIdp, startOidcIdp } from './harness/oidc-idp.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

interface ToolResult {
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

const PEOPLE = {
  alice: { email: 'alice@example.com', groups: ['ops'] },
  bob: { email: 'bob@example.com', groups: ['visitors'] },
};
const UPSTREAM_CLIENT = { client_id: 'fleetmesh-broker', client_secret: 'fleetmesh-broker-secret-for-tests' };

describe('people of an external OpenID provider, in its own process', () => {
  let idp: OidcIdp;
  let webPort: number;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let callback: CallbackListener;

  const freshPage = async () => {
    page = await (await browser.newContext()).newPage();
    problems = watchProblems(page);
  };

  /** The person signs in on the provider's own page. */
  const atProvider = (login: string, shot?: string) => async (authorizationUrl: URL) => {
    await freshPage();
    const back = callback.next();
    await page.goto(authorizationUrl.href);
    await page.waitForSelector('h1:has-text("Example IdP sign-in")');
    if (shot) await screenshot(page, shot);
    await page.fill('input[name=login]', login);
    await page.click('button[type=submit]');
    return back;
  };

  beforeAll(async () => {
    webPort = await freePort();
    idp = await startOidcIdp({
      people: PEOPLE,
      clients: [{ ...UPSTREAM_CLIENT, redirect_uris: [`http://127.0.0.1:${webPort}/oauth/upstream/callback`] }],
    });
    callback = await new CallbackListener().start();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await callback?.stop();
    await idp?.stop();
  });

  describe('trusted by the broker (--oauth URL)', () => {
    let fleet: TestFleet;
    let alice: Client | undefined;
    let provider: MemoryOAuthProvider;

    beforeAll(async () => {
      fleet = await startTestFleet({ operationsLevel: 2, oauth: { ...OAUTH_OFF, mode: 'external', issuer: idp.issuer, requiredScopes: ['fleet'] } });
      await fleet.addAgent('ox-web-1');
      await fleet.addAgent('ox-db-1');
    });
    afterAll(async () => {
      await alice?.close();
      await fleet?.stop();
    });

    it('lets a person in as the first mapping rule says, names them and their client in the audit, and never above the operations level', async () => {
      const dataDir = join(fleet.root, 'broker');
      const mapped = await runFleetmesh([
        'identity',
        'map',
        '--issuer',
        idp.issuer,
        '--group',
        'ops',
        '--level',
        '3',
        '--grant',
        'host:ox-web-*=write',
        '--data-dir',
        dataDir,
      ]);
      expect(mapped.stdout).toMatch(
        /^Rule rule-[0-9a-f]+ \(number 1\): people of http:\/\/127\.0\.0\.1:\d+ with group ops get level 3, host:ox-web-\*=write\./,
      );
      await runFleetmesh(['identity', 'map', '--issuer', idp.issuer, '--email', '*@example.com', '--level', '0', '--data-dir', dataDir]);
      expect((await runFleetmesh(['identity', 'rules', '--data-dir', dataDir])).stdout).toMatch(
        /1\s+rule-\S+\s+http\S+\s+group ops\s+3[\s\S]*2\s+rule-\S+\s+http\S+\s+email \*@example\.com\s+0/,
      );

      provider = new MemoryOAuthProvider(callback.url);
      alice = await connectWithOAuth(fleet.broker.mcpUrl, provider, atProvider('alice', 'oauth-external-idp'));
      // The provider registered the client and issued a JWT for this server alone.
      expect(decodeJwt(provider.stored?.access_token ?? '')).toMatchObject({ iss: idp.issuer, aud: fleet.broker.mcpUrl, sub: 'alice', scope: 'fleet' });
      const tools = (await alice.listTools()).tools.map((tool) => tool.name);
      expect(tools).toContain('set_agent_labels');
      // Level 3 by the rule, 2 by the broker: level-3 tools are not there.
      expect(tools).not.toContain('docker_remove');
      const labelled = (await alice.callTool({ name: 'set_agent_labels', arguments: { host: 'ox-web-1', labels: { owner: 'alice' } } })) as ToolResult;
      expect(labelled.isError).toBeFalsy();
      const elsewhere = (await alice.callTool({ name: 'set_agent_labels', arguments: { host: 'ox-db-1', labels: { owner: 'alice' } } })) as ToolResult;
      expect(elsewhere.structuredContent.error).toMatchObject({ code: expect.stringMatching(/forbidden|not_found/) });
      const [row] = await fleet.broker.store.audit.recent({ limit: 5 }).then((rows) => rows.filter((r) => r.outcome === 'ok'));
      expect(row).toMatchObject({
        identity: 'alice@example.com',
        subject: 'alice',
        email: 'alice@example.com',
        clientId: provider.client?.client_id,
        targets: ['ox-web-1'],
      });
      const listed = await runFleetmesh(['audit', '--data-dir', dataDir]);
      expect(listed.stdout).toMatch(/alice@example\.com \(alice@example\.com, sub alice, client \S+\)\s+set_agent_labels/);
      expect(problems).toEqual([]);
    });

    it('refuses, with 403, a person no rule maps, and a person whose rule was removed at their next request', async () => {
      const dataDir = join(fleet.root, 'broker');
      const bobProvider = new MemoryOAuthProvider(callback.url, { name: 'bob client' });
      // bob's email matches the second rule: level 0, he reads.
      const bob = await connectWithOAuth(fleet.broker.mcpUrl, bobProvider, atProvider('bob'));
      const bobTools = (await bob.listTools()).tools.map((tool) => tool.name);
      expect(bobTools).toContain('agent_info');
      expect(bobTools).not.toContain('set_agent_labels');
      for (const rule of await fleet.broker.store.identityRules.list()) {
        const removed = await runFleetmesh(['identity', 'unmap', rule.id, '--data-dir', dataDir]);
        expect(removed.stdout).toBe(`removed mapping rule ${rule.id}\n`);
      }
      await expect(alice?.listTools()).rejects.toThrow(/403|Forbidden|no mapping rule/);
      await expect(bob.listTools()).rejects.toThrow(/403|Forbidden|no mapping rule/);
      await bob.close();
      const refused = await fleet.broker.store.audit.recent({ limit: 5, refused: true });
      expect(refused[0]).toMatchObject({ tool: '/mcp', reason: expect.stringMatching(/no mapping rule of this broker lets them in/) });
    });
  });

  describe('as the upstream of the built-in server (--oauth builtin --oauth-upstream URL)', () => {
    let fleet: TestFleet;

    beforeAll(async () => {
      fleet = await startTestFleet({
        operationsLevel: 2,
        webListen: `127.0.0.1:${webPort}`,
        oauth: {
          ...OAUTH_OFF,
          mode: 'builtin',
          requiredScopes: ['fleet'],
          upstream: {
            issuer: idp.issuer,
            clientId: UPSTREAM_CLIENT.client_id,
            clientSecret: UPSTREAM_CLIENT.client_secret,
            scopes: ['openid', 'email', 'groups'],
          },
        },
      });
      await fleet.addAgent('ou-web-1');
      await fleet.broker.store.identityRules.add({
        id: 'rule-ops',
        issuer: idp.issuer,
        match: { group: 'ops' },
        level: 2,
        grants: ['host:ou-*=write'],
        tools: { disable: [], enable: [] },
        createdAt: Date.now(),
      });
    });
    afterAll(async () => {
      await fleet?.stop();
    });

    it('signs a person in through the provider on the console page, and the broker maps them by the provider and their groups', async () => {
      const provider = new MemoryOAuthProvider(callback.url, { name: 'upstream client' });
      const client = await connectWithOAuth(fleet.broker.mcpUrl, provider, async (url) => {
        await freshPage();
        const back = callback.next();
        await page.goto(url.href);
        await page.click('a:has-text("Sign in with")');
        await page.waitForSelector('h1:has-text("Example IdP sign-in")');
        await page.fill('input[name=login]', 'alice');
        await page.click('button[type=submit]');
        await page.waitForSelector('h1:has-text("Let this client act as alice@example.com")');
        await screenshot(page, 'oauth-upstream-consent');
        await page.click('button:has-text("Allow")');
        return back;
      });
      const claims = decodeJwt(provider.stored?.access_token ?? '');
      expect(claims).toMatchObject({ iss: fleet.broker.oauth?.issuer, aud: fleet.broker.mcpUrl, idp: idp.issuer, idp_sub: 'alice', groups: ['ops'] });
      const result = (await client.callTool({ name: 'set_agent_labels', arguments: { host: 'ou-web-1', labels: { via: 'upstream' } } })) as ToolResult;
      expect(result.isError).toBeFalsy();
      const [row] = await fleet.broker.store.audit.recent({ limit: 1 });
      expect(row).toMatchObject({ identity: 'alice@example.com', subject: 'alice', email: 'alice@example.com', clientId: provider.client?.client_id });
      expect(problems).toEqual([]);
      await client.close();
    });
  });
});

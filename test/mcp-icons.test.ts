import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { domainOf } from '../shared/catalog/action.ts';
import { CATALOG } from '../shared/catalog/catalog.ts';
import { everyDomainCollectors } from './harness/every-domain-collectors.ts';
import { identityToken, mcpClient } from './harness/mcp-client.ts';
import { mcpClientV2 } from './harness/mcp-client-v2.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with no credentials, as a client fetching an icon to draw it. */
function get(url: string, headers: Record<string, string> = {}): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('icons', () => {
  let fleet: TestFleet;
  let origin: string;
  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 3 });
    // An agent serving every domain: the lists are the full catalog.
    await fleet.addAgent('all', { collectors: everyDomainCollectors() });
    origin = new URL(fleet.broker.mcpUrl).origin;
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it("gives every tool its domain's icon, at a URL the broker serves as SVG to anyone without a token", async () => {
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(CATALOG.length);
      for (const tool of tools) {
        const action = CATALOG.find((a) => a.tool === tool.name);
        expect({ tool: tool.name, icons: tool.icons }).toEqual({
          tool: tool.name,
          icons: [{ src: `${origin}/icons/${action && domainOf(action)}.svg` }],
        });
      }
      const urls = new Set(tools.flatMap((tool) => (tool.icons ?? []).map((icon) => icon.src)));
      expect(urls.size).toBe(new Set(CATALOG.map(domainOf)).size);
      for (const url of urls) {
        const icon = await get(url);
        expect({ url, status: icon.status, type: icon.headers['content-type'] }).toEqual({ url, status: 200, type: 'image/svg+xml' });
        expect(icon.headers['cache-control']).toContain('immutable');
        expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>\n$/s);
        expect(icon.body).not.toMatch(/<script|on\w+=/i);
        // An unchanged icon is not sent again.
        expect((await get(url, { 'if-none-match': String(icon.headers.etag) })).status).toBe(304);
      }
    } finally {
      await client.close();
    }
  });

  it('names the product icon in the server info, and icons on resource templates and prompts', async () => {
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    try {
      expect(client.getServerVersion()?.icons).toEqual([{ src: `${origin}/icons/fleetmesh.svg` }]);
      expect((await get(`${origin}/icons/fleetmesh.svg`)).status).toBe(200);
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.find((t) => t.uriTemplate.includes('/containers/'))?.icons).toEqual([{ src: `${origin}/icons/docker.svg` }]);
      expect(resourceTemplates.filter((t) => !t.icons?.length).map((t) => t.uriTemplate)).toEqual([]);
      const { prompts } = await client.listPrompts();
      expect(prompts.length).toBeGreaterThan(0);
      expect(prompts.filter((p) => !p.icons?.length).map((p) => p.name)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('lists the same icons to a 2026-07-28 client', async () => {
    const token = await identityToken(fleet.broker, 3);
    const legacy = await mcpClient(fleet.broker, token);
    const modern = await mcpClientV2(fleet.broker, token);
    try {
      const iconsOf = (tools: { name: string; icons?: unknown }[]) => Object.fromEntries(tools.map((tool) => [tool.name, tool.icons]));
      expect(iconsOf((await modern.listTools()).tools)).toEqual(iconsOf((await legacy.listTools()).tools));
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('serves icons only by GET or HEAD, and only under an allowed Host', async () => {
    const url = `${origin}/icons/docker.svg`;
    expect((await get(url, { host: 'attacker.example:80' })).status).toBe(403);
    const posted = await new Promise<number>((resolve, reject) => {
      request(url, { method: 'POST' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(posted).toBe(405);
    expect((await get(`${origin}/icons/nothing.svg`)).status).toBe(404);
  });
});

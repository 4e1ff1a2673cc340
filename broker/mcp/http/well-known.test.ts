import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeServer, serveEdge } from '../../../test/harness/edge-server.ts';
import { EdgeChain } from './edge-chain.ts';
import type { Exchange } from './exchange.ts';
import { protectedResourceMetadataUrl, wellKnownDocuments } from './well-known.ts';

describe('wellKnownDocuments', () => {
  let server: EdgeServer;
  beforeAll(async () => {
    server = await serveEdge(
      EdgeChain.start<Exchange>()
        .use(wellKnownDocuments(() => 'https://fleet.example/mcp'))
        .end(async () => {}),
    );
  });
  afterAll(() => server.close());

  it('serves the protected resource metadata of the endpoint without a token, at the well-known path and under it', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const answer = await fetch(new URL(path, server.url));
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({
        resource: 'https://fleet.example/mcp',
        authorization_servers: [],
        bearer_methods_supported: ['header'],
        resource_name: 'fleetmesh',
        resource_documentation: expect.stringMatching(/fleetmesh identity create NAME --level 0\.\.3/),
      });
    }
  });

  it('hands every other path on', async () => {
    expect((await fetch(new URL('/mcp', server.url))).status).toBe(418);
    expect((await fetch(new URL('/.well-known/openid-configuration', server.url))).status).toBe(418);
  });

  it('names where the metadata of an endpoint is, by its path', () => {
    expect(protectedResourceMetadataUrl('https://fleet.example:8443/mcp')).toBe('https://fleet.example:8443/.well-known/oauth-protected-resource/mcp');
    expect(protectedResourceMetadataUrl('http://127.0.0.1:7400/tenant/mcp')).toBe('http://127.0.0.1:7400/.well-known/oauth-protected-resource/tenant/mcp');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeServer, serveEdge } from '../../../test/harness/edge-server.ts';
import { sendJson, sendJsonRpcError } from './json-answers.ts';

describe('JSON answers', () => {
  let server: EdgeServer;
  beforeAll(async () => {
    server = await serveEdge(async ({ res, url }) => {
      if (url.pathname === '/rpc') sendJsonRpcError(res, 429, -32000, 'Too many sessions', { 'retry-after': '60' });
      else sendJson(res, 404, { error: 'not found' });
    });
  });
  afterAll(() => server.close());

  it('write a status, a JSON body and the headers given', async () => {
    const plain = await fetch(new URL('/nope', server.url));
    expect([plain.status, plain.headers.get('content-type'), await plain.json()]).toEqual([404, 'application/json', { error: 'not found' }]);
    const rpc = await fetch(new URL('/rpc', server.url));
    expect([rpc.status, rpc.headers.get('retry-after')]).toEqual([429, '60']);
    expect(await rpc.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Too many sessions' }, id: null });
  });
});

import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { asksForSomething, isInitialize, isLegacy, isListen, listenedResources } from './mcp-request-kind.ts';

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const listen = (uris: unknown) => ({ jsonrpc: '2.0', id: 2, method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: uris } } });

/** The parts of a Node request the classification reads. */
function request(method: string, headers: Record<string, string> = {}): IncomingMessage {
  return { method, headers } as unknown as IncomingMessage;
}

describe('the kind of an MCP request', () => {
  it('is 2025-era for an initialize, a body that is not JSON, or a GET without the 2026 headers', () => {
    expect(isLegacy(request('POST'), initialize)).toBe(true);
    expect(isLegacy(request('POST'), undefined)).toBe(true);
    expect(isLegacy(request('GET'), undefined)).toBe(true);
  });

  it('is 2026-07-28 for a request that names that revision in its headers and envelope', () => {
    const discover = {
      jsonrpc: '2.0',
      id: 1,
      method: 'server/discover',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
    };
    expect(isLegacy(request('POST', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' }), discover)).toBe(false);
  });

  it('tells an initialize, a request that asks for an answer, and a listen apart, in a batch too', () => {
    expect(isInitialize([{ jsonrpc: '2.0', method: 'notifications/initialized' }, initialize])).toBe(true);
    expect(isInitialize({ jsonrpc: '2.0', id: 1, method: 'ping' })).toBe(false);
    expect(asksForSomething({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(true);
    // An answer to the server (an elicitation's) and a notification ask for nothing.
    expect(
      asksForSomething([
        { jsonrpc: '2.0', id: 7, result: {} },
        { jsonrpc: '2.0', method: 'notifications/cancelled' },
      ]),
    ).toBe(false);
    expect(isListen(listen([]))).toBe(true);
    expect(isListen([listen([])])).toBe(false);
  });

  it('reads the URIs a listen names, strings only and at most 100', () => {
    expect(listenedResources(listen(['fleet://agents', 7, 'fleet://hosts/web-1']))).toEqual(['fleet://agents', 'fleet://hosts/web-1']);
    expect(listenedResources(listen(Array.from({ length: 150 }, (_, i) => `fleet://hosts/h${i}`)))).toHaveLength(100);
    expect(listenedResources(listen('fleet://agents'))).toEqual([]);
    expect(listenedResources(initialize)).toEqual([]);
  });
});

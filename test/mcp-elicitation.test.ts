import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { callV2, mcpClientV2 } from './harness/mcp-client-v2.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

/** A 1.x client that can show its user an elicitation, answering each one as told. */
async function elicitingClient(fleet: TestFleet, token: string, answer: (message: string) => { action: 'accept' | 'decline'; confirm?: boolean }) {
  const asked: string[] = [];
  const client = new Client({ name: 'eliciting', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    const { action, confirm } = answer(request.params.message);
    return action === 'accept' ? { action, content: { confirm: confirm ?? true } } : { action };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(fleet.broker.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return { client, asked };
}

describe('confirmation of destructive calls through elicitation', () => {
  let fleet: TestFleet;
  let token: string;
  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 3 });
    for (const name of ['keep-1', 'doomed-1', 'doomed-2', 'spared-1', 'spared-2']) await fleet.addAgent(name);
    token = await identityToken(fleet.broker, 3);
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it('asks a 2025-era client that can elicit, showing the exact targets, and runs once the user accepts', async () => {
    const { client, asked } = await elicitingClient(fleet, token, () => ({ action: 'accept' }));
    try {
      const result = await call(client, 'revoke_agent', { host: 'doomed-1' });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('"doomed-1"');
      expect(asked[0]).not.toContain('keep-1');
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ revoked: [{ host: 'doomed-1' }] });
    } finally {
      await client.close();
    }
  });

  it('answers a clean cancellation and changes nothing when the user declines (or accepts without confirming)', async () => {
    for (const answer of [{ action: 'decline' as const }, { action: 'accept' as const, confirm: false }]) {
      const { client, asked } = await elicitingClient(fleet, token, () => answer);
      try {
        const result = await call(client, 'revoke_agent', { host: 'spared-1' });
        expect(asked).toHaveLength(1);
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toMatchObject({ error: { code: 'cancelled' }, targets: [{ host: 'spared-1' }] });
        expect(fleet.broker.registry.find('spared-1')?.state).toBe('online');
      } finally {
        await client.close();
      }
    }
  });

  it('asks a 2026-07-28 client through an input-required round trip', async () => {
    const asked: string[] = [];
    const client = await mcpClientV2(fleet.broker, token, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { confirm: true } };
    });
    try {
      const result = await callV2(client, 'revoke_agent', { host: 'doomed-2' });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('"doomed-2"');
      expect(result.structuredContent).toMatchObject({ revoked: [{ host: 'doomed-2' }] });
    } finally {
      await client.close();
    }
  });

  it('answers confirm_required, as before, to a client that cannot elicit', async () => {
    for (const client of [await mcpClient(fleet.broker, token), await mcpClientV2(fleet.broker, token)]) {
      try {
        const result =
          client instanceof Client ? await call(client, 'revoke_agent', { host: 'spared-2' }) : await callV2(client, 'revoke_agent', { host: 'spared-2' });
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toMatchObject({ error: { code: 'confirm_required' }, targets: [{ host: 'spared-2' }] });
      } finally {
        await client.close();
      }
    }
    expect(fleet.broker.registry.find('spared-2')?.state).toBe('online');
  });
});

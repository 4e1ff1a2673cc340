import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { identityToken, mcpClient } from './harness/mcp-client.ts';
import { mcpClientV2 } from './harness/mcp-client-v2.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

const AnyResult = z.looseObject({});

describe('MCP tasks and 2026-07-28 clients', () => {
  let fleet: TestFleet;
  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 1 });
    await fleet.addAgent('tm-a');
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it('answers a 2026-07-28 call that asks for a task with its plain result, and says why tasks/get finds nothing', async () => {
    const token = await identityToken(fleet.broker, 1);
    const modern = await mcpClientV2(fleet.broker, token, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
    const legacy = await mcpClient(fleet.broker, token);
    try {
      // Nothing advertises tasks on this revision: no capability, no taskSupport on tools.
      expect(modern.getServerCapabilities()).not.toHaveProperty('tasks');
      expect((await modern.listTools()).tools.find((t) => t.name === 'agent_info')).not.toHaveProperty('execution');

      const result = await modern.request(
        { method: 'tools/call', params: { name: 'agent_info', arguments: { host: 'tm-a' }, task: { ttl: 60_000 } } } as never,
        AnyResult as never,
      );
      expect(result).not.toHaveProperty('task');
      expect(result).toMatchObject({ structuredContent: { host: 'tm-a', availability: 'available' } });

      // A task of the same identity, started by a 2025-era session, is not served to this revision either.
      const { task } = await legacy.request(
        { method: 'tools/call', params: { name: 'agent_info', arguments: {}, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      for (const method of ['tasks/get', 'tasks/cancel']) {
        const refusal = modern.request({ method, params: { taskId: task.taskId } } as never, AnyResult as never);
        await expect(refusal).rejects.toBeInstanceOf(ProtocolError);
        await expect(refusal).rejects.toMatchObject({
          code: ProtocolErrorCode.MethodNotFound,
          message: expect.stringMatching(/io\.modelcontextprotocol\/tasks extension/),
        });
      }
      // The other task methods do not exist on this revision: the client refuses them before sending.
      for (const method of ['tasks/result', 'tasks/list']) {
        const refusal = (async () => modern.request({ method, params: { taskId: task.taskId } } as never, AnyResult as never))();
        await expect(refusal).rejects.toBeInstanceOf(SdkError);
        await expect(refusal).rejects.toMatchObject({ code: SdkErrorCode.MethodNotSupportedByProtocolVersion });
      }
    } finally {
      await modern.close();
      await legacy.close();
    }
  });
});

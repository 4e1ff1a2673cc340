import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema, GetTaskResultSchema, type TaskStatusNotification, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityToken, mcpClient } from './harness/mcp-client.ts';
import { openRawStream, type RawStream } from './harness/raw-stream.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

type TaskStatus = TaskStatusNotification['params'];

/** Every `notifications/tasks/status` a client hears. */
function statuses(client: Client): TaskStatus[] {
  const heard: TaskStatus[] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
    heard.push(notification.params);
  });
  return heard;
}

describe('MCP task status notifications', () => {
  let fleet: TestFleet;
  let silent: RawStream;

  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 1 });
    await fleet.addAgent('ts-a');
    await fleet.addAgent('ts-b');
    // A host that takes the call and never answers: the task stays at two of three.
    const donor = await fleet.addAgent('ts-silent');
    await fleet.stopAgent(donor);
    silent = openRawStream(fleet.address, donor.connection.currentIdentity, { actions: ['agent.info'] });
    await waitFor(() => silent.frames.some((f) => f.frame.case === 'welcome'), { what: 'the silent host welcomed' });
  });
  afterAll(async () => {
    silent?.close();
    await fleet?.stop();
  });

  it('tells every session of the identity how many hosts answered, then how the task ended, and tells no other identity', async () => {
    const token = await identityToken(fleet.broker, 1);
    const owner = await mcpClient(fleet.broker, token);
    const watcher = await mcpClient(fleet.broker, token);
    const stranger = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1));
    try {
      const heardByOwner = statuses(owner);
      const heardByWatcher = statuses(watcher);
      const heardByStranger = statuses(stranger);
      const { task } = await owner.request(
        {
          method: 'tools/call',
          params: { name: 'agent_info', arguments: { hosts: ['ts-a', 'ts-b', 'ts-silent'], timeout_ms: 60_000 }, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      );
      const twoOfThree = (heard: TaskStatus[]) =>
        heard.some((s) => s.taskId === task.taskId && s.status === 'working' && /^2 of 3 hosts answered/.test(s.statusMessage ?? ''));
      await waitFor(() => twoOfThree(heardByOwner) && twoOfThree(heardByWatcher), { what: 'both sessions told two of three hosts answered' });
      const polled = await watcher.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema);
      expect(polled).toMatchObject({ status: 'working', statusMessage: expect.stringMatching(/^2 of 3 hosts answered/) });

      await watcher.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, GetTaskResultSchema);
      const ended = (heard: TaskStatus[]) => heard.some((s) => s.taskId === task.taskId && s.status === 'cancelled');
      await waitFor(() => ended(heardByOwner) && ended(heardByWatcher), { what: 'both sessions told the task was cancelled' });
      // A status is told once per change, in order: nothing after the end.
      expect(heardByOwner.at(-1)?.status).toBe('cancelled');
      expect(heardByStranger).toEqual([]);
    } finally {
      await owner.close();
      await watcher.close();
      await stranger.close();
    }
  });
});

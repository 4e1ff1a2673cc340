import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, GetTaskResultSchema, type TaskStatusNotification, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityToken, mcpClient } from './harness/mcp-client.ts';
import { openRawStream, type RawStream } from './harness/raw-stream.ts';
import { startTestCluster, type TestCluster } from './harness/test-cluster.ts';
import { waitFor } from './harness/wait.ts';

/** Every `notifications/tasks/status` a client hears. */
function statuses(client: Client): TaskStatusNotification['params'][] {
  const heard: TaskStatusNotification['params'][] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
    heard.push(notification.params);
  });
  return heard;
}

describe('MCP tasks in a broker cluster', () => {
  let cluster: TestCluster;
  let silent: RawStream | undefined;

  beforeAll(async () => {
    cluster = await startTestCluster();
  });
  afterAll(async () => {
    silent?.close();
    await cluster?.stop();
  });

  it("tells the identity's sessions on every broker how a task another broker runs goes, and tells no other identity", async () => {
    await cluster.addAgent('tc-quick', 'c');
    const token = await identityToken(cluster.a, 0);
    const owner = await mcpClient(cluster.a, token);
    const elsewhere = await mcpClient(cluster.c, token);
    const stranger = await mcpClient(cluster.c, await identityToken(cluster.a, 0));
    try {
      const heardElsewhere = statuses(elsewhere);
      const heardByStranger = statuses(stranger);
      const { task } = await owner.request(
        { method: 'tools/call', params: { name: 'agent_info', arguments: { host: 'tc-quick', watch_ms: 1500, interval_ms: 500 }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      await waitFor(() => heardElsewhere.some((status) => status.taskId === task.taskId && status.status === 'completed'), {
        what: 'the session on c told the task a ran completed',
      });
      expect(heardByStranger.filter((status) => status.taskId === task.taskId)).toEqual([]);
    } finally {
      await Promise.all([owner.close(), elsewhere.close(), stranger.close()]);
    }
  });

  it('ends as failed, when another broker sees it dead, a task its broker left working', async () => {
    // A host held by b that takes the call and never answers: the task works until b dies.
    const donor = await cluster.addAgent('tc-silent', 'b');
    await donor.stop();
    // Until b has let go of the donor, "online" on a may still be the donor's session, and a call would find no one.
    await waitFor(() => cluster.a.registry.find('tc-silent')?.state === 'offline', { what: 'the donor offline, seen from a' });
    silent = openRawStream(cluster.address.b, donor.connection.currentIdentity, { actions: ['agent.info'] });
    await waitFor(() => silent?.frames.some((f) => f.frame.case === 'welcome'), { what: 'the silent host welcomed by b' });
    await waitFor(() => cluster.a.registry.find('tc-silent')?.state === 'online', { what: 'the silent host online through b' });
    const token = await identityToken(cluster.a, 0);
    const onB = new Client({ name: 'tasks-cluster-test', version: '1' });
    await onB.connect(new StreamableHTTPClientTransport(new URL(cluster.mcpUrl.b), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    const { task } = await onB.request(
      { method: 'tools/call', params: { name: 'agent_info', arguments: { host: 'tc-silent', timeout_ms: 60_000 }, task: { ttl: 600_000 } } },
      CreateTaskResultSchema,
    );
    const onA = await mcpClient(cluster.a, token);
    try {
      const poll = () => onA.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema);
      await waitFor(
        async () => {
          const polled = await poll();
          // Thrown rather than returned false, so a timeout says what the task was instead.
          if (polled.status !== 'working' || !/^0 of 1 host answered/.test(polled.statusMessage ?? ''))
            throw new Error(`${polled.status}: ${polled.statusMessage}`);
          return polled;
        },
        { what: 'the task working on b, seen from a' },
      );
      cluster.b.signal('SIGKILL');
      await onB.close().catch(() => {});
      const ended = await waitFor(
        async () => {
          const polled = await poll();
          return polled.status !== 'working' && polled;
        },
        { what: 'a or c to end the task b left working' },
      );
      expect(ended).toMatchObject({
        status: 'failed',
        statusMessage: expect.stringMatching(/^broker b left the cluster \(.*\) before the task ended; last progress: 0 of 1 host answered/),
      });
    } finally {
      await onA.close();
    }
  });
});

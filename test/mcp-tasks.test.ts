import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema, ListTasksResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testDocker } from './harness/containers.ts';
import { identityToken, mcpClient } from './harness/mcp-client.ts';
import { createService, removeSwarmObjects } from './harness/swarm-services.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const SERVICES = ['tk-stuck'];

async function startTask(client: Client, name: string, args: Record<string, unknown>) {
  return (await client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 600_000 } } }, CreateTaskResultSchema)).task;
}

const getTask = (client: Client, taskId: string) => client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema);
const taskResult = (client: Client, taskId: string) => client.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema);

describe('long calls as MCP tasks', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let token: string;

  beforeAll(async () => {
    docker = testDocker();
    await removeSwarmObjects(docker, { services: SERVICES });
    // A service that can never converge: its one task has nowhere to run.
    await createService(docker, { name: 'tk-stuck', command: ['sleep', '3600'], constraints: ['node.labels.tk-nowhere==yes'] });
    fleet = await startTestFleet({ operationsLevel: 2 });
    await fleet.addAgent('tk-mgr', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      domainFlags: { 'swarm-name': 'test-swarm' },
      token: await fleet.token({ roles: ['swarm-manager'] }),
    });
    await fleet.addAgent('tk-plain');
    token = await identityToken(fleet.broker, 2);
  });
  afterAll(async () => {
    await fleet?.stop();
    await removeSwarmObjects(docker, { services: SERVICES });
  });

  it('advertises which tools may run as tasks, from their declaration', async () => {
    const client = await mcpClient(fleet.broker, token);
    try {
      expect(client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const tools = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
      expect(tools.get('update_service')?.execution).toEqual({ taskSupport: 'optional' });
      expect(tools.get('agent_info')?.execution).toEqual({ taskSupport: 'optional' });
      expect(tools.get('describe')?.execution).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('runs a fleet-wide call as a task whose result another connection of the identity fetches, and no other identity sees', async () => {
    const first = await mcpClient(fleet.broker, token);
    const task = await startTask(first, 'agent_info', {});
    expect(task.status).toBe('working');
    await first.close();

    const second = await mcpClient(fleet.broker, token);
    const stranger = await mcpClient(fleet.broker, await identityToken(fleet.broker, 2));
    try {
      const result = await taskResult(second, task.taskId);
      expect(result.structuredContent).toMatchObject({ targeted: 2, responded: 2 });
      expect((await getTask(second, task.taskId)).status).toBe('completed');
      expect((await second.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema)).tasks.map((t) => t.taskId)).toContain(task.taskId);
      await expect(getTask(stranger, task.taskId)).rejects.toThrow(/no task/);
      expect((await stranger.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema)).tasks).toEqual([]);
    } finally {
      await second.close();
      await stranger.close();
    }
  });

  it('runs update_service with wait as a task that outlives its connection, which a second connection polls and cancels', async () => {
    const first = await mcpClient(fleet.broker, token);
    const task = await startTask(first, 'update_service', { id: 'tk-stuck', section: 'labels', value: { touched: 'yes' }, wait: true });
    await first.close();

    const second = await mcpClient(fleet.broker, token);
    try {
      await waitFor(async () => /^0 of 1 host answered \(sent to tk-mgr/.test((await getTask(second, task.taskId)).statusMessage ?? ''), {
        what: 'the task to report its manager',
      });
      // The change is made; the task now waits for a convergence that cannot come.
      await waitFor(async () => (await docker.getService('tk-stuck').inspect()).Spec.Labels?.touched === 'yes', { what: 'the label applied' });
      expect((await getTask(second, task.taskId)).status).toBe('working');
      const cancelled = await second.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, GetTaskResultSchema);
      expect(cancelled.status).toBe('cancelled');
      expect((await getTask(second, task.taskId)).status).toBe('cancelled');
      const result = await taskResult(second, task.taskId);
      expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId });
      await expect(second.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, GetTaskResultSchema)).rejects.toThrow(/already ended/);
    } finally {
      await second.close();
    }
  });

  it('refuses a task for a tool that does not run as one', async () => {
    const client = await mcpClient(fleet.broker, token);
    try {
      await expect(startTask(client, 'describe', { id: 'tk-stuck', type: 'service' })).rejects.toThrow(/does not run as a task/);
    } finally {
      await client.close();
    }
  });
});

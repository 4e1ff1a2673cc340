import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LinkedFleet, startLinkedFleet } from '../../test/harness/linked-fleet.ts';
import { memoryClient, memoryClientV2 } from '../../test/harness/memory-client.ts';
import { recordingStop } from '../../test/harness/recording-stop.ts';
import { ToolGlobSet } from '../auth/tool-filter.ts';
import { decideApproval } from '../calls/approvals/decide-approval.ts';
import type { SurfaceName } from './surfaces/surface.ts';

interface Result {
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/** The call of docker_stop on each surface. */
const STOP_CALL: Record<SurfaceName, [string, Record<string, unknown>]> = {
  individual: ['docker_stop', { host: 'web-1', name: 'nginx', confirm: true }],
  meta: ['docker', { action: 'stop', params: { host: 'web-1', name: 'nginx' }, confirm: true }],
  dynamic: ['execute_action', { action: 'docker.stop', params: { host: 'web-1', name: 'nginx' }, confirm: true }],
};

const stop = recordingStop;

describe.each([
  ['individual', 'legacy'],
  ['meta', 'legacy'],
  ['dynamic', 'legacy'],
  ['individual', 'modern'],
  ['dynamic', 'modern'],
] as const)('a call that waits for a second person, on the %s surface of a %s session', (surface, era) => {
  let fleet: LinkedFleet;
  const stopped: string[] = [];

  beforeEach(async () => {
    stopped.length = 0;
    fleet = await startLinkedFleet({ approvals: { level: 1, tools: new ToolGlobSet([]), ttlMs: 60_000 } });
    await fleet.addHost('web-1', [stop(stopped)]);
  });
  afterEach(() => fleet.stop());

  it('tells its client what it waits for, and runs once another identity approves it', async () => {
    const { client, close } = await memoryClientV2(fleet.mcpSession(fleet.identity(1, undefined, 'alice'), { surface, era }), { era });
    try {
      const heard: string[] = [];
      const [name, args] = STOP_CALL[surface];
      const pending = client.callTool({ name, arguments: args }, { onprogress: (progress) => heard.push(progress.message ?? '') }) as Promise<Result>;
      let [waiting] = await fleet.store.approvals.list({ pending: true, limit: 1, now: Date.now() });
      while (!waiting) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        [waiting] = await fleet.store.approvals.list({ pending: true, limit: 1, now: Date.now() });
      }
      expect(waiting).toMatchObject({ identity: 'alice', tool: name, action: 'docker.stop', arguments: expect.anything() });
      expect(stopped).toEqual([]);
      await decideApproval(fleet.store, waiting.id, 'approve', { name: 'bob' }, undefined);
      const result = await pending;
      expect(result.isError).toBeFalsy();
      expect(stopped).toEqual(['nginx']);
      expect(heard.some((message) => message.includes(waiting.id))).toBe(true);
    } finally {
      await close();
    }
  });
});

describe('an MCP task whose call waits for a second person', () => {
  let fleet: LinkedFleet;
  const stopped: string[] = [];
  afterEach(() => fleet.stop());

  it('shows input_required while it waits, then ends saying the approval expired, with nothing changed', async () => {
    fleet = await startLinkedFleet({ approvals: { level: 1, tools: new ToolGlobSet([]), ttlMs: 400 } });
    await fleet.addHost('web-1', [stop(stopped)]);
    const { client, close } = await memoryClient(fleet.mcpSession(fleet.identity(1, undefined, 'alice')));
    try {
      const { task } = await client.request(
        { method: 'tools/call', params: { name: 'docker_stop', arguments: { host: 'web-1', name: 'nginx', confirm: true }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const seen = new Set<string>();
      let status = await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema);
      while (status.status === 'working' || status.status === 'input_required') {
        seen.add(status.status);
        await new Promise((resolve) => setTimeout(resolve, 20));
        status = await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema);
      }
      expect(seen.has('input_required')).toBe(true);
      const result = (await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema)) as Result;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'deadline_exceeded', message: expect.stringContaining('expired') } });
      expect(stopped).toEqual([]);
    } finally {
      await close();
    }
  });
});

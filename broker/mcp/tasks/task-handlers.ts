import type { Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { McpTasks } from './mcp-tasks.ts';

const TaskIdParams = z.looseObject({ taskId: z.string().min(1).max(100) });
const CursorParams = z.looseObject({ cursor: z.string().max(100).optional() }).optional();

/**
 * The task requests (`tasks/get`, `tasks/result`, `tasks/list`,
 * `tasks/cancel`) of one identity: it sees its own tasks, from any of its
 * sessions, and no one else's.
 */
export function registerTaskHandlers(server: Server, tasks: McpTasks, identityId: string): void {
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, async (params) => ({ ...(await tasks.get(identityId, params.taskId)) }));
  server.setRequestHandler('tasks/result', { params: TaskIdParams }, async (params, ctx) => ({
    ...(await tasks.result(identityId, params.taskId, ctx.mcpReq.signal)),
  }));
  server.setRequestHandler('tasks/list', { params: CursorParams }, async (params) => tasks.list(identityId, params?.cursor));
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async (params) => ({ ...(await tasks.cancel(identityId, params.taskId)) }));
}

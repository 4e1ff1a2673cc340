import { ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { McpSessionEra } from '../mcp-session.ts';
import type { McpTasks } from './mcp-tasks.ts';

const TaskIdParams = z.looseObject({ taskId: z.string().min(1).max(100) });
const CursorParams = z.looseObject({ cursor: z.string().max(100).optional() }).optional();

/**
 * Why a 2026-07-28 request gets no task. That revision took tasks out of the
 * core protocol (no `tasks/*` methods, no task status notification, no
 * `task` on `tools/call`: the SDK drops it, so the call answers in the
 * request) and into the `io.modelcontextprotocol/tasks` extension
 * (SEP-2663), whose task results (`resultType: "task"`) the 2.x SDK does
 * not implement (its client refuses them), so neither does the broker.
 */
const NO_TASKS_ON_MODERN_ERA =
  'tasks are served to 2025-era sessions (initialize) only: protocol revision 2026-07-28 moved them to the io.modelcontextprotocol/tasks extension, which this broker does not serve yet; call the tool without a task for its result';

/**
 * The task requests (`tasks/get`, `tasks/result`, `tasks/list`,
 * `tasks/cancel`) of one identity: it sees its own tasks, from any of its
 * sessions, and no one else's. On the 2026-07-28 era the SDK answers
 * `tasks/result` and `tasks/list` as unknown methods; `tasks/get` and
 * `tasks/cancel`, names the extension reuses, reach the broker, which says
 * why there is no task to get.
 */
export function registerTaskHandlers(server: Server, tasks: McpTasks, identityId: string, era: McpSessionEra): void {
  if (era === 'modern') {
    const refuse = async (): Promise<never> => {
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, NO_TASKS_ON_MODERN_ERA);
    };
    server.setRequestHandler('tasks/get', { params: TaskIdParams }, refuse);
    server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, refuse);
    return;
  }
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, async (params) => ({ ...(await tasks.get(identityId, params.taskId)) }));
  server.setRequestHandler('tasks/result', { params: TaskIdParams }, async (params, ctx) => ({
    ...(await tasks.result(identityId, params.taskId, ctx.mcpReq.signal)),
  }));
  server.setRequestHandler('tasks/list', { params: CursorParams }, async (params) => tasks.list(identityId, params?.cursor));
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async (params) => ({ ...(await tasks.cancel(identityId, params.taskId)) }));
}

import type { ActionOutput } from '../../../shared/catalog/action.ts';
import type { proxmoxTaskStatus, proxmoxTasks } from '../../../shared/domains/proxmox/proxmox-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { ProxmoxAccess } from './proxmox-access.ts';
import type { PveApi, PveTask } from './pve-api.ts';
import { parseUpid } from './upid.ts';

type TaskRow = ActionOutput<typeof proxmoxTasks>['tasks'][number];

/** A log line is text from the cluster; one line may not flood the answer. */
const MAX_LOG_LINE_CHARS = 2000;

/** Proxmox VE leaves status out (or says RUNNING) while a task runs, and puts its exit status there after. */
function taskRow(task: PveTask): TaskRow {
  const running = task.endtime === undefined && (task.status === undefined || task.status === 'RUNNING');
  const exitStatus = running ? null : (task.status ?? null);
  return {
    upid: task.upid,
    node: task.node,
    type: task.type,
    id: task.id,
    user: task.user,
    status: running ? 'running' : 'stopped',
    exit_status: exitStatus,
    ok: exitStatus === null ? null : exitStatus === 'OK',
    starttime_unix_ms: task.starttime * 1000,
    endtime_unix_ms: task.endtime === undefined ? null : task.endtime * 1000,
  };
}

/**
 * The last `wanted` lines of a task log. The API pages from the start and says
 * in `total` how long the log is, so a long log costs a second, bounded page.
 */
async function logTail(api: PveApi, node: string, upid: string, wanted: number) {
  if (wanted === 0) return { log: [], log_total_lines: null, log_truncated: false };
  let page = await api.taskLog(node, upid, 0, wanted);
  const total = page.total;
  if (total !== undefined && total > wanted) page = await api.taskLog(node, upid, total - wanted, wanted);
  return {
    log: page.lines.map((line) => ({ n: line.n, text: line.t.slice(0, MAX_LOG_LINE_CHARS) })),
    log_total_lines: total ?? null,
    // Without a total the page is the head of the log, and a full page may not be all of it.
    log_truncated: total === undefined ? page.lines.length >= wanted : total > page.lines.length,
  };
}

/** proxmox_tasks and proxmox_task_status, with the read token. */
export function registerTaskReads(dispatcher: Dispatcher, access: ProxmoxAccess): void {
  dispatcher.register<typeof proxmoxTasks>('proxmox.tasks', async (params, context) => {
    const api = access.reader(context);
    let node = params.node;
    if (node === undefined) node = await access.membership.localNode(api);
    else await access.membership.requireNode(api, node);
    const limit = params.limit ?? 50;
    const tasks = await api.nodeTasks(node, {
      limit,
      source: params.source ?? 'all',
      ...(params.errors_only ? { errors: true } : {}),
      ...(params.vmid !== undefined ? { vmid: params.vmid } : {}),
      ...(params.type !== undefined ? { typefilter: params.type } : {}),
      ...(params.since_unix_ms !== undefined ? { since: Math.floor(params.since_unix_ms / 1000) } : {}),
    });
    const rows = tasks
      .map(taskRow)
      .filter((task) => params.since_unix_ms === undefined || task.starttime_unix_ms >= params.since_unix_ms)
      // Stable: tasks of the same second keep the API's order, which is newest first.
      .sort((a, b) => b.starttime_unix_ms - a.starttime_unix_ms)
      .slice(0, limit);
    return { payload: { node, answered_by_node: await access.membership.answeredBy(api), tasks: rows, count: rows.length } };
  });

  dispatcher.register<typeof proxmoxTaskStatus>('proxmox.task_status', async (params, context) => {
    const api = access.reader(context);
    // A task's status and log live on the node that ran it, which the UPID names.
    const { node } = parseUpid(params.upid);
    await access.membership.requireNode(api, node);
    const status = await api.taskStatus(node, params.upid);
    const tail = await logTail(api, node, params.upid, params.log_lines ?? 50);
    const exitStatus = status.status === 'running' ? null : (status.exitstatus ?? null);
    return {
      payload: {
        upid: status.upid,
        node: status.node,
        answered_by_node: await access.membership.answeredBy(api),
        type: status.type,
        id: status.id,
        user: status.user,
        status: status.status,
        exit_status: exitStatus,
        ok: exitStatus === null ? null : exitStatus === 'OK',
        starttime_unix_ms: status.starttime * 1000,
        ...tail,
      },
    };
  });
}

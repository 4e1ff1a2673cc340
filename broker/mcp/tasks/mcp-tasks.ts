import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { type CallToolResult, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { BrokerStore } from '../../store/broker-store.ts';
import { BROKER_STOPPED, type InterruptedScope, type McpTaskRow } from '../../store/mcp-tasks-table.ts';
import { type TextFormat, toToolError } from '../tool-result.ts';
import { interruptedResult } from './interrupted-result.ts';
import { TaskStatusPump } from './task-status-pump.ts';

/** A task as the MCP task vocabulary has it. */
export interface TaskWire {
  taskId: string;
  status: McpTaskRow['status'] | 'input_required';
  ttl: number;
  createdAt: string;
  lastUpdatedAt: string;
  pollInterval: number;
  statusMessage?: string;
}

/** Where a task's call reports its progress, the audit row it wrote, and an approval it waits for. */
interface TaskHooks {
  onProgress: (done: number, total: number, message: string) => void;
  onAudited: (auditId: string) => void;
  onApproval: (waiting: string | undefined) => void;
}

/** What a task runs: the call, with the task's own cancellation and its hooks. */
export type TaskWork = (signal: AbortSignal, hooks: TaskHooks) => Promise<CallToolResult>;

/** How often a client is told to poll. */
const POLL_INTERVAL_MS = 1000;
/** How often running tasks are checked for a cancel asked of another broker of the cluster. */
const CANCEL_CHECK_MS = 1000;
const PRUNE_EVERY_MS = 60_000;
const LIST_PAGE = 50;
/** The most often a task's progress is written and told to its identity's sessions. */
const STATUS_INTERVAL_MS = 1000;

function toWire(row: McpTaskRow): TaskWire {
  return {
    taskId: row.taskId,
    // Still working as the store has it, but the client is told what it waits for (2025-11-25's input_required).
    status: row.status === 'working' && row.inputRequired ? 'input_required' : row.status,
    ttl: row.ttlMs,
    createdAt: new Date(row.createdAt).toISOString(),
    lastUpdatedAt: new Date(row.updatedAt).toISOString(),
    pollInterval: POLL_INTERVAL_MS,
    ...(row.statusMessage ? { statusMessage: row.statusMessage } : {}),
  };
}

function notFound(taskId: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `no task ${taskId}: it never existed, belongs to another identity, or expired`);
}

/** A task's progress as its status says it: hosts settled of hosts targeted, and what just happened. */
function progressMessage(done: number, total: number, message: string): string {
  return `${Math.floor(done)} of ${total} host${total === 1 ? '' : 's'} answered (${message})`;
}

/** The reason a task's work is stopped with when its broker stops. */
class BrokerStopped extends Error {
  constructor() {
    super('the broker stopped');
  }
}

/** The text of a failed task: the first text of its result. */
function failureText(result: CallToolResult): string {
  const first = result.content.find((c) => c.type === 'text');
  return first && first.type === 'text' ? first.text.split('\n')[0]?.slice(0, 300) || 'the call failed' : 'the call failed';
}

/**
 * MCP tasks: calls a client asked to run in the background. The task, its
 * status and its result live in the broker's store, so they outlive the
 * client's connection (and, with a shared store, are read from any broker of
 * the cluster); the work itself runs on the broker that took the call, which
 * stops it when a cancel is asked of it or, through the store, of another.
 * Each change of a task's status is emitted as `status` with the identity it
 * belongs to, for that identity's sessions alone.
 */
export class McpTasks extends EventEmitter<{ status: [identityId: string, task: TaskWire] }> {
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private cancelChecker: NodeJS.Timeout | undefined;
  private pruner: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly store: BrokerStore,
    private readonly log: Logger,
    /** How long a task and its result are kept after it ended (and the most a client may ask for). */
    private readonly ttlMs: number,
    /** How the results this writes itself (an interrupted or remotely cancelled task's) put their text. */
    private readonly textFormat: TextFormat,
  ) {
    super();
  }

  start(): void {
    this.cancelChecker = setInterval(() => void this.stopCancelled(), CANCEL_CHECK_MS);
    this.cancelChecker.unref();
    this.pruner = setInterval(() => void this.store.mcpTasks.prune(Date.now()).catch(() => {}), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  /** Stops the work still running here; its tasks end as failed, since nobody will finish them. */
  async stop(): Promise<void> {
    clearInterval(this.cancelChecker);
    clearInterval(this.pruner);
    const running = [...this.running.entries()];
    for (const [, task] of running) task.controller.abort(new BrokerStopped());
    await Promise.all(running.map(([, task]) => task.done));
  }

  /**
   * Ends as failed the tasks a broker left working when it stopped without
   * ending them: at start, this broker's previous run (every working task on
   * a single broker); in a cluster, a broker seen dead (broker-cluster.ts).
   */
  async interrupted(scope: InterruptedScope): Promise<number> {
    const count = await this.store.mcpTasks.interrupt(scope, BROKER_STOPPED, Date.now());
    if (count) this.log.warn('MCP tasks left working by a broker that stopped marked failed', { count });
    return count;
  }

  /** Starts the work as a task of the identity and answers at once with the task. */
  async create(identityId: string, tool: string, requestedTtlMs: number | undefined, work: TaskWork): Promise<TaskWire> {
    const now = Date.now();
    const ttlMs = Math.min(Math.max(requestedTtlMs ?? this.ttlMs, 1000), this.ttlMs);
    const taskId = randomUUID();
    const row = {
      taskId,
      identityId,
      tool,
      status: 'working' as const,
      statusMessage: `${tool}: started`,
      createdAt: now,
      updatedAt: now,
      ttlMs,
      expiresAt: now + ttlMs,
    };
    await this.store.mcpTasks.insert(row);
    const controller = new AbortController();
    let current: McpTaskRow = { ...row, result: null, cancelRequested: false, auditId: null, inputRequired: false };
    let writes = Promise.resolve();
    const status = new TaskStatusPump(STATUS_INTERVAL_MS, (statusMessage) => {
      // In order, one at a time: a later status never lands before an earlier one, and is told once stored.
      writes = writes.then(async () => {
        const updatedAt = Date.now();
        if (await this.store.mcpTasks.progress(taskId, statusMessage, updatedAt).catch(() => false)) {
          current = { ...current, statusMessage, updatedAt };
          this.emit('status', identityId, toWire(current));
        }
      });
    });
    const onProgress = (done: number, total: number, message: string) => status.push(progressMessage(done, total, message));
    const onAudited = (auditId: string) => {
      writes = writes.then(() => this.store.mcpTasks.audited(taskId, auditId).catch(() => {}));
    };
    const onApproval = (waiting: string | undefined) => {
      const statusMessage = waiting ?? `${tool}: approved, running`;
      writes = writes.then(async () => {
        const updatedAt = Date.now();
        if (await this.store.mcpTasks.inputRequired(taskId, waiting !== undefined, statusMessage, updatedAt).catch(() => false)) {
          current = { ...current, inputRequired: waiting !== undefined, statusMessage, updatedAt };
          this.emit('status', identityId, toWire(current));
        }
      });
    };
    const done = work(controller.signal, { onProgress, onAudited, onApproval })
      .then(async (result) => {
        status.stop();
        await writes;
        if (controller.signal.reason instanceof BrokerStopped) {
          await this.interrupted({ taskId });
          return;
        }
        const cancelled = controller.signal.aborted;
        const ended = cancelled ? 'cancelled' : result.isError ? 'failed' : 'completed';
        const statusMessage = cancelled ? `${tool}: cancelled` : result.isError ? failureText(result) : `${tool}: done`;
        const updatedAt = Date.now();
        if (await this.store.mcpTasks.finish(taskId, ended, statusMessage, result, updatedAt)) {
          this.emit('status', identityId, toWire({ ...current, status: ended, statusMessage, updatedAt, expiresAt: updatedAt + current.ttlMs }));
        }
      })
      .catch((error: unknown) => this.log.error('MCP task did not record its end', { task: taskId, error: (error as Error).message }))
      .finally(() => this.running.delete(taskId));
    this.running.set(taskId, { controller, done });
    return toWire(current);
  }

  async get(identityId: string, taskId: string): Promise<TaskWire> {
    const row = await this.store.mcpTasks.get(identityId, taskId, Date.now());
    if (!row) throw notFound(taskId);
    return toWire(row);
  }

  async list(identityId: string, cursor: string | undefined): Promise<{ tasks: TaskWire[]; nextCursor?: string }> {
    const before = cursor === undefined ? undefined : Number(cursor);
    if (before !== undefined && !Number.isSafeInteger(before)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'tasks/list: unknown cursor');
    const rows = await this.store.mcpTasks.list(identityId, Date.now(), LIST_PAGE, before);
    const last = rows.at(-1);
    return { tasks: rows.map(toWire), ...(rows.length === LIST_PAGE && last ? { nextCursor: String(last.createdAt) } : {}) };
  }

  /** The task's result, once it has ended (waiting for it while it works, unless the request is cancelled). */
  async result(identityId: string, taskId: string, signal: AbortSignal): Promise<CallToolResult> {
    for (;;) {
      const row = await this.store.mcpTasks.get(identityId, taskId, Date.now());
      if (!row) throw notFound(taskId);
      if (row.status !== 'working') {
        const result = (row.result ??
          interruptedResult(row, row.auditId ? await this.store.audit.get(row.auditId) : undefined, this.textFormat)) as CallToolResult;
        return { ...result, _meta: { ...result._meta, 'io.modelcontextprotocol/related-task': { taskId } } };
      }
      const local = this.running.get(taskId)?.done;
      await Promise.race([
        local ?? new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS).unref()),
        new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true })),
      ]);
      if (signal.aborted) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'tasks/result: the request was cancelled');
    }
  }

  /** Cancels a task still working: the work stops (here, or on the broker running it), and the task ends as cancelled. */
  async cancel(identityId: string, taskId: string): Promise<TaskWire> {
    const row = await this.store.mcpTasks.get(identityId, taskId, Date.now());
    if (!row) throw notFound(taskId);
    if (row.status !== 'working') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `task ${taskId} has already ended (${row.status})`);
    const local = this.running.get(taskId);
    if (local) {
      local.controller.abort(new Error('cancelled by the client'));
      await local.done;
    } else {
      await this.store.mcpTasks.requestCancel(taskId);
      const cancelled = new FleetError('cancelled', `the task was cancelled by the client before ${row.tool} ended`);
      await this.store.mcpTasks.finish(taskId, 'cancelled', `${row.tool}: cancelled`, toToolError(cancelled, this.textFormat), Date.now());
    }
    const task = await this.get(identityId, taskId);
    if (!local) this.emit('status', identityId, task);
    return task;
  }

  /** Stops the work of tasks whose cancel was asked of another broker. */
  private async stopCancelled(): Promise<void> {
    if (this.checking || this.running.size === 0) return;
    this.checking = true;
    try {
      for (const taskId of await this.store.mcpTasks.cancelRequested([...this.running.keys()])) {
        this.running.get(taskId)?.controller.abort(new Error('cancelled by the client'));
      }
    } catch {
      // The store did not answer: look again on the next round.
    } finally {
      this.checking = false;
    }
  }
}

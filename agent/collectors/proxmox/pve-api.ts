import type { z } from 'zod';
import type { ApiToken } from './api-token.ts';
import { proxmoxFailure } from './proxmox-failure.ts';
import type { PveClient, PveParams } from './pve-client.ts';

import type { PveClusterMember, PveNodeStatus, PveResource, PveShapes, PveTask, PveTaskStatus, PveVersion } from './pve-shapes.ts';

export type { PveClusterMember, PveResource, PveTask } from './pve-shapes.ts';

export type GuestType = 'qemu' | 'lxc';
export type PowerAction = 'start' | 'reboot' | 'shutdown';

/** What a request needs of the call it serves. */
export interface CallBounds {
  signal: AbortSignal;
  deadlineUnixMs: number;
}

interface PveSession extends CallBounds {
  client: PveClient;
  token: ApiToken;
  caPem: string | undefined;
}

const segment = encodeURIComponent;

/**
 * The slice of the Proxmox VE API the collector uses, each call checked
 * against what the API documents (`test/proxmox/api-schema.json`);
 * an answer of another shape is a `response` failure, not a crash further on.
 * One instance is bound to one token for one call.
 */
export class PveApi {
  constructor(private readonly session: PveSession) {}

  /** The id (never the secret) of the token this instance uses, for messages. */
  get tokenId(): string {
    return this.session.token.id;
  }

  /** A GET, its answer checked against the shape `pick` chooses (the shapes load with the first request, not with the agent). */
  private async get<T extends z.ZodType>(
    path: string,
    pick: (shapes: PveShapes) => T,
    params?: PveParams,
  ): Promise<{ data: z.infer<T>; total: number | undefined }> {
    const [answer, shapes] = await Promise.all([this.session.client.call({ method: 'GET', path, ...this.common(params) }), import('./pve-shapes.ts')]);
    return { data: this.check(`GET ${path}`, pick(shapes), answer.data), total: answer.total };
  }

  private common(params?: PveParams) {
    return {
      token: this.session.token,
      signal: this.session.signal,
      deadlineUnixMs: this.session.deadlineUnixMs,
      ...(params ? { params } : {}),
      ...(this.session.caPem ? { caPem: this.session.caPem } : {}),
    };
  }

  private check<T extends z.ZodType>(what: string, shape: T, data: unknown): z.infer<T> {
    const parsed = shape.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw proxmoxFailure(
        'response',
        `the answer to ${what} does not have the documented shape at ${issue?.path.join('.') || 'the top'}: ${issue?.message ?? 'invalid'}`,
        {
          hint: 'Something other than the Proxmox VE API answers at the endpoint, or its version is far from what this agent knows.',
        },
      );
    }
    return parsed.data;
  }

  async version(): Promise<PveVersion> {
    return (await this.get('/version', (s) => s.versionShape)).data;
  }

  async clusterStatus(): Promise<PveClusterMember[]> {
    return (await this.get('/cluster/status', (s) => s.clusterMembersShape)).data;
  }

  /** Everything, unfiltered: the node answering is always in it, which tells an ACL-limited view from an empty cluster. */
  async clusterResources(): Promise<PveResource[]> {
    return (await this.get('/cluster/resources', (s) => s.resourcesShape)).data;
  }

  async nodeStatus(node: string): Promise<PveNodeStatus> {
    return (await this.get(`/nodes/${segment(node)}/status`, (s) => s.nodeStatusShape)).data;
  }

  async nodeTasks(
    node: string,
    filters: { limit: number; errors?: boolean; vmid?: number; typefilter?: string; source?: string; since?: number },
  ): Promise<PveTask[]> {
    return (await this.get(`/nodes/${segment(node)}/tasks`, (s) => s.tasksShape, filters)).data;
  }

  async taskStatus(node: string, upid: string): Promise<PveTaskStatus> {
    return (await this.get(`/nodes/${segment(node)}/tasks/${segment(upid)}/status`, (s) => s.taskStatusShape)).data;
  }

  /** Lines `start`… of a task log (numbered from 1 by Proxmox VE), and how many the log has when the API says. */
  async taskLog(node: string, upid: string, start: number, limit: number): Promise<{ lines: { n: number; t: string }[]; total: number | undefined }> {
    const answer = await this.get(`/nodes/${segment(node)}/tasks/${segment(upid)}/log`, (s) => s.logLinesShape, { start, limit });
    return { lines: answer.data, total: answer.total };
  }

  /** Asks for a power action; Proxmox VE answers with the UPID of the task that carries it out. Never retried. */
  async guestPower(node: string, type: GuestType, vmid: number, action: PowerAction, params: PveParams): Promise<string> {
    const path = `/nodes/${segment(node)}/${type}/${vmid}/status/${action}`;
    const [answer, shapes] = await Promise.all([this.session.client.call({ method: 'POST', path, ...this.common(params) }), import('./pve-shapes.ts')]);
    return this.check(`POST ${path}`, shapes.upidShape, answer.data);
  }
}

import { z } from 'zod';
import type { ApiToken } from './api-token.ts';
import { proxmoxFailure } from './proxmox-failure.ts';
import type { PveClient, PveParams } from './pve-client.ts';

/** Proxmox VE writes booleans as 1 and 0. */
const pveBool = z.union([z.boolean(), z.number()]).transform((value) => Boolean(value));
const count = z.number();

const versionShape = z.object({ version: z.string(), release: z.string(), repoid: z.string() }).loose();

const clusterMemberShape = z
  .object({
    type: z.string(),
    name: z.string(),
    nodeid: count.optional(),
    ip: z.string().optional(),
    online: pveBool.optional(),
    local: pveBool.optional(),
    quorate: pveBool.optional(),
  })
  .loose();

const resourceShape = z
  .object({
    id: z.string(),
    type: z.string(),
    node: z.string().optional(),
    vmid: count.optional(),
    name: z.string().optional(),
    status: z.string().optional(),
    cpu: count.optional(),
    maxcpu: count.optional(),
    mem: count.optional(),
    maxmem: count.optional(),
    maxdisk: count.optional(),
    uptime: count.optional(),
    tags: z.string().optional(),
    template: pveBool.optional(),
    lock: z.string().optional(),
  })
  .loose();

const usageShape = z.object({ total: count, used: count, free: count }).loose();

const nodeStatusShape = z
  .object({
    cpu: count,
    cpuinfo: z.object({ cores: count, cpus: count, sockets: count, model: z.string() }).loose(),
    loadavg: z.array(z.union([z.string(), z.number()])),
    memory: usageShape.extend({ available: count.optional() }),
    rootfs: usageShape.extend({ avail: count }),
    pveversion: z.string(),
    'current-kernel': z.object({ release: z.string() }).loose().optional(),
    // Not in the schema (it allows additional properties), but every Proxmox VE release sends them.
    kversion: z.string().optional(),
    uptime: count.optional(),
    swap: usageShape.optional(),
  })
  .loose();

const taskShape = z
  .object({
    upid: z.string(),
    node: z.string(),
    type: z.string(),
    id: z.string(),
    user: z.string(),
    starttime: count,
    endtime: count.optional(),
    status: z.string().optional(),
  })
  .loose();

const taskStatusShape = z
  .object({
    upid: z.string(),
    node: z.string(),
    type: z.string(),
    id: z.string(),
    user: z.string(),
    starttime: count,
    status: z.enum(['running', 'stopped']),
    exitstatus: z.string().optional(),
  })
  .loose();

const logLineShape = z.object({ n: count, t: z.string() }).loose();

type PveVersion = z.infer<typeof versionShape>;
export type PveClusterMember = z.infer<typeof clusterMemberShape>;
export type PveResource = z.infer<typeof resourceShape>;
type PveNodeStatus = z.infer<typeof nodeStatusShape>;
export type PveTask = z.infer<typeof taskShape>;
type PveTaskStatus = z.infer<typeof taskStatusShape>;
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

  private async get<T extends z.ZodType>(path: string, shape: T, params?: PveParams): Promise<{ data: z.infer<T>; total: number | undefined }> {
    const answer = await this.session.client.call({ method: 'GET', path, ...this.common(params) });
    return { data: this.check(`GET ${path}`, shape, answer.data), total: answer.total };
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
    return (await this.get('/version', versionShape)).data;
  }

  async clusterStatus(): Promise<PveClusterMember[]> {
    return (await this.get('/cluster/status', z.array(clusterMemberShape))).data;
  }

  /** Everything, unfiltered: the node answering is always in it, which tells an ACL-limited view from an empty cluster. */
  async clusterResources(): Promise<PveResource[]> {
    return (await this.get('/cluster/resources', z.array(resourceShape))).data;
  }

  async nodeStatus(node: string): Promise<PveNodeStatus> {
    return (await this.get(`/nodes/${segment(node)}/status`, nodeStatusShape)).data;
  }

  async nodeTasks(
    node: string,
    filters: { limit: number; errors?: boolean; vmid?: number; typefilter?: string; source?: string; since?: number },
  ): Promise<PveTask[]> {
    return (await this.get(`/nodes/${segment(node)}/tasks`, z.array(taskShape), filters)).data;
  }

  async taskStatus(node: string, upid: string): Promise<PveTaskStatus> {
    return (await this.get(`/nodes/${segment(node)}/tasks/${segment(upid)}/status`, taskStatusShape)).data;
  }

  /** Lines `start`… of a task log (numbered from 1 by Proxmox VE), and how many the log has when the API says. */
  async taskLog(node: string, upid: string, start: number, limit: number): Promise<{ lines: { n: number; t: string }[]; total: number | undefined }> {
    const answer = await this.get(`/nodes/${segment(node)}/tasks/${segment(upid)}/log`, z.array(logLineShape), { start, limit });
    return { lines: answer.data, total: answer.total };
  }

  /** Asks for a power action; Proxmox VE answers with the UPID of the task that carries it out. Never retried. */
  async guestPower(node: string, type: GuestType, vmid: number, action: PowerAction, params: PveParams): Promise<string> {
    const path = `/nodes/${segment(node)}/${type}/${vmid}/status/${action}`;
    const answer = await this.session.client.call({ method: 'POST', path, ...this.common(params) });
    return this.check(`POST ${path}`, z.string().min(1), answer.data);
  }
}

import { z } from 'zod';

/**
 * The shapes of the Proxmox VE answers the collector reads, as the API documents
 * them (`test/proxmox/api-schema.json`); `pve-api.ts` loads them with its first request.
 */

/** Proxmox VE writes booleans as 1 and 0. */
const pveBool = z.union([z.boolean(), z.number()]).transform((value) => Boolean(value));
const count = z.number();

export const versionShape = z.object({ version: z.string(), release: z.string(), repoid: z.string() }).loose();

export const clusterMemberShape = z
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

export const resourceShape = z
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

export const nodeStatusShape = z
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

export const taskShape = z
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

export const taskStatusShape = z
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

export const logLineShape = z.object({ n: count, t: z.string() }).loose();

export const clusterMembersShape = z.array(clusterMemberShape);
export const resourcesShape = z.array(resourceShape);
export const tasksShape = z.array(taskShape);
export const logLinesShape = z.array(logLineShape);
/** What a power action answers: the UPID of its task. */
export const upidShape = z.string().min(1);

export type PveShapes = typeof import('./pve-shapes.ts');
export type PveVersion = z.infer<typeof versionShape>;
export type PveClusterMember = z.infer<typeof clusterMemberShape>;
export type PveResource = z.infer<typeof resourceShape>;
export type PveNodeStatus = z.infer<typeof nodeStatusShape>;
export type PveTask = z.infer<typeof taskShape>;
export type PveTaskStatus = z.infer<typeof taskStatusShape>;

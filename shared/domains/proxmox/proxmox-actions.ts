import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { UPID_PATTERN } from './proxmox-head.ts';

/** Proxmox VE's own rule for node names (`pve-node`): they end up in API paths. */
const nodeName = z
  .string()
  .max(63)
  .regex(/^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/, 'not a Proxmox VE node name');

const vmid = z.number().int().min(100).max(999_999_999);
const guestType = z.enum(['qemu', 'lxc']);

const answeredBy = z
  .string()
  .nullable()
  .describe(
    "The Proxmox VE node whose API answered (the node this agent runs on); null when the agent's token may not read /cluster/status. Cluster-wide answers are the same from every node of a cluster.",
  );

const proxmoxStatusOutput = z.object({
  answered_by_node: answeredBy,
  endpoint: z.string().describe('The API this agent talks to.'),
  version: z.object({ version: z.string(), release: z.string(), repoid: z.string() }).nullable().describe('null when version is in failed_collectors.'),
  cluster: z
    .object({
      name: z.string().nullable().describe('null for a standalone node.'),
      quorate: z.boolean().nullable(),
      nodes_total: z.number(),
      nodes_online: z.number(),
      nodes: z.array(z.object({ name: z.string(), node_id: z.number().nullable(), online: z.boolean(), ip: z.string().nullable(), local: z.boolean() })),
    })
    .nullable()
    .describe('null when cluster is in failed_collectors.'),
  resources: z
    .object({
      nodes_total: z.number(),
      nodes_online: z.number(),
      qemu_total: z.number(),
      qemu_running: z.number(),
      lxc_total: z.number(),
      lxc_running: z.number(),
      templates: z.number(),
      storage_total: z.number(),
      memory_used_bytes: z.number().describe('Summed over online nodes.'),
      memory_total_bytes: z.number(),
    })
    .nullable()
    .describe('null when resources is in failed_collectors.'),
});

export const proxmoxStatus = defineAction({
  id: 'proxmox.status',
  tool: 'proxmox_status',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'PVE status',
  description: 'A Proxmox VE cluster at a glance: version, quorum, nodes, guest and storage counts; one agent per cluster is enough (host).',
  input: z.object({}).strict(),
  output: proxmoxStatusOutput,
  table: { columns: ['answered_by_node', 'version', 'resources'] },
  related: ['proxmox.guests', 'proxmox.node'],
});

export const guestRowShape = z.object({
  vmid: z.number(),
  name: z.string(),
  node: z.string(),
  type: guestType,
  status: z.string().describe('running, stopped, or unknown when its node is offline.'),
  template: z.boolean(),
  cpu_percent: z.number().nullable().describe('Share of its allotted CPUs in use.'),
  cpus: z.number().nullable(),
  memory_used_bytes: z.number().nullable(),
  memory_max_bytes: z.number().nullable(),
  disk_max_bytes: z.number().nullable(),
  uptime_s: z.number().nullable(),
  tags: z.array(z.string()),
  lock: z.string().nullable().describe('A config lock such as backup or migrate; null when unlocked.'),
});

export const proxmoxGuests = defineAction({
  id: 'proxmox.guests',
  tool: 'proxmox_guests',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'PVE guests',
  description: 'The VMs and containers of a Proxmox VE cluster (node, status, CPU, memory, tags); one agent per cluster is enough (host).',
  input: z
    .object({
      node: nodeName.optional(),
      status: z.enum(['running', 'stopped']).optional(),
      type: guestType.optional().describe('qemu (VM) or lxc (container).'),
    })
    .strict(),
  output: z.object({ answered_by_node: answeredBy, guests: z.array(guestRowShape), count: z.number() }),
  table: { list: 'guests', columns: ['vmid', 'name', 'node', 'type', 'status', 'cpu_percent', 'memory_used_bytes', 'memory_max_bytes', 'uptime_s'] },
  related: ['proxmox.guest_start', 'proxmox.guest_shutdown'],
});

export const proxmoxNode = defineAction({
  id: 'proxmox.node',
  tool: 'proxmox_node',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'PVE node',
  description: "One Proxmox VE node's vital signs (default: the agent's own node).",
  input: z.object({ node: nodeName.optional().describe("Default: the agent's own.") }).strict(),
  output: z.object({
    node: z.string(),
    answered_by_node: answeredBy,
    pve_version: z.string(),
    kernel: z.string(),
    uptime_s: z.number().nullable(),
    cpu: z.object({ usage_percent: z.number(), cores: z.number(), threads: z.number(), sockets: z.number(), model: z.string() }),
    load: z.object({ load_1: z.number(), load_5: z.number(), load_15: z.number() }),
    memory: z.object({
      total_bytes: z.number(),
      used_bytes: z.number(),
      free_bytes: z.number(),
      available_bytes: z.number().nullable(),
      usage_percent: z.number(),
    }),
    swap: z.object({ total_bytes: z.number(), used_bytes: z.number(), free_bytes: z.number() }).nullable(),
    rootfs: z.object({ total_bytes: z.number(), used_bytes: z.number(), available_bytes: z.number(), usage_percent: z.number() }),
  }),
  table: { columns: ['node', 'pve_version', 'uptime_s', 'cpu', 'memory'] },
});

const taskRowShape = z.object({
  upid: z.string(),
  node: z.string(),
  type: z.string().describe('What the task does, such as qmstart, vzshutdown or vzdump.'),
  id: z.string().describe('What it acts on, usually a vmid; empty for node-wide tasks.'),
  user: z.string(),
  status: z.enum(['running', 'stopped']),
  exit_status: z.string().nullable().describe('OK, WARNINGS: n, or the error; null while running.'),
  ok: z.boolean().nullable().describe('Whether it ended with OK; null while running.'),
  starttime_unix_ms: z.number(),
  endtime_unix_ms: z.number().nullable(),
});

export const proxmoxTasks = defineAction({
  id: 'proxmox.tasks',
  tool: 'proxmox_tasks',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'PVE tasks',
  description: 'Recent tasks of a Proxmox VE node, newest first, with who started them and how they ended.',
  input: z
    .object({
      node: nodeName.optional().describe("Default: the agent's own."),
      limit: z.number().int().min(1).max(500).optional().describe('default 50'),
      errors_only: z.boolean().optional(),
      vmid: vmid.optional(),
      type: z
        .string()
        .max(64)
        .regex(/^[a-zA-Z0-9_-]+$/)
        .optional()
        .describe('Such as vzdump or qmstart.'),
      source: z.enum(['archive', 'active', 'all']).optional().describe('archive (finished), active (running) or all (default).'),
      since_unix_ms: z.number().int().min(0).optional(),
    })
    .strict(),
  output: z.object({ node: z.string(), answered_by_node: answeredBy, tasks: z.array(taskRowShape), count: z.number() }),
  table: { list: 'tasks', columns: ['starttime_unix_ms', 'type', 'id', 'user', 'status', 'exit_status'] },
  related: ['proxmox.task_status'],
});

export const proxmoxTaskStatus = defineAction({
  id: 'proxmox.task_status',
  tool: 'proxmox_task_status',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'PVE task status',
  description: 'One Proxmox VE task by UPID: running or stopped, exit status, last log lines; poll it after a guest power action.',
  input: z
    .object({
      upid: z.string().max(512).regex(UPID_PATTERN, 'not a UPID (UPID:node:pid:pstart:starttime:type:id:user:)'),
      log_lines: z.number().int().min(0).max(1000).optional().describe('Last log lines (default 50).'),
    })
    .strict(),
  output: taskRowShape.omit({ endtime_unix_ms: true }).extend({
    answered_by_node: answeredBy,
    log: z.array(z.object({ n: z.number(), text: z.string() })),
    log_total_lines: z.number().nullable().describe('How many lines the whole log has; null when the API did not say.'),
    log_truncated: z.boolean().describe('Earlier lines were left out.'),
  }),
  table: { list: 'log', columns: ['n', 'text'] },
});

const powerInput = {
  node: nodeName,
  type: guestType.describe('qemu for a VM, lxc for a container.'),
  vmid: vmid,
  confirm: z.boolean().optional().describe('Must be true for the guest to change; without it nothing happens and the answer says what would.'),
};

const powerOutput = z.object({
  status: z.literal('accepted').describe('Proxmox VE accepted the request and runs it as a task.'),
  upid: z.string().describe('The task; proxmox_task_status says when it ends and how.'),
  action: z.enum(['start', 'reboot', 'shutdown']),
  node: z.string(),
  type: guestType,
  vmid: z.number(),
  answered_by_node: answeredBy,
});

const powerTable = { columns: ['status', 'action', 'node', 'type', 'vmid', 'upid'] };

export const proxmoxGuestStart = defineAction({
  id: 'proxmox.guest_start',
  tool: 'proxmox_guest_start',
  longRunning: true,
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'Start a PVE guest',
  description: 'Starts a Proxmox VE guest; needs an agent with an action token. Answers a UPID for proxmox_task_status.',
  input: z.object(powerInput).strict(),
  output: powerOutput,
  table: powerTable,
  related: ['proxmox.task_status', 'proxmox.guests'],
});

export const proxmoxGuestReboot = defineAction({
  id: 'proxmox.guest_reboot',
  tool: 'proxmox_guest_reboot',
  longRunning: true,
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'Reboot a PVE guest',
  description: 'Reboots a Proxmox VE guest cleanly; needs an agent with an action token. Answers a UPID for proxmox_task_status.',
  input: z
    .object({
      ...powerInput,
      timeout_s: z.number().int().min(0).max(3600).optional(),
    })
    .strict(),
  output: powerOutput,
  table: powerTable,
  related: ['proxmox.task_status'],
});

export const proxmoxGuestShutdown = defineAction({
  id: 'proxmox.guest_shutdown',
  tool: 'proxmox_guest_shutdown',
  longRunning: true,
  risk: 'destructive',
  level: 1,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'Shut down a PVE guest',
  description: 'Shuts a Proxmox VE guest down through its OS; needs an agent with an action token. Answers a UPID for proxmox_task_status.',
  input: z
    .object({
      ...powerInput,
      timeout_s: z.number().int().min(0).max(3600).optional(),
      force_stop: z.boolean().optional().describe('Stop it hard after timeout_s.'),
    })
    .strict(),
  output: powerOutput,
  table: powerTable,
  related: ['proxmox.task_status', 'proxmox.guest_start'],
});

const scriptRisk = z.enum(['read', 'write', 'destructive']).describe("What running the command would do to the host, in homebutler's classes.");

export const proxmoxScriptList = defineAction({
  id: 'proxmox.script_list',
  tool: 'proxmox_script_list',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'PVE helper scripts',
  description: "Proxmox VE maintenance commands shipped with the agent (nothing runs); proxmox_script_command gives one's text.",
  input: z
    .object({
      category: z.string().max(64).optional(),
      query: z.string().max(128).optional().describe('Text in id, title or description.'),
    })
    .strict(),
  output: z.object({
    scripts: z.array(z.object({ id: z.string(), title: z.string(), description: z.string(), category: z.string(), risk: scriptRisk })),
    count: z.number(),
    categories: z.array(z.string()),
  }),
  table: { list: 'scripts', columns: ['id', 'category', 'risk', 'title'] },
  related: ['proxmox.script_command'],
});

export const proxmoxScriptCommand = defineAction({
  id: 'proxmox.script_command',
  tool: 'proxmox_script_command',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'proxmox',
  title: 'Helper script command',
  description: "One proxmox_script_list entry's command, for a person to review and run as root (fleetmesh never runs it).",
  input: z.object({ id: z.string().min(1).max(64).describe('The script id from proxmox_script_list.') }).strict(),
  output: z.object({
    id: z.string(),
    title: z.string(),
    category: z.string(),
    risk: scriptRisk,
    command: z.string(),
    notes: z.array(z.string()),
    runs_where: z.string(),
  }),
});

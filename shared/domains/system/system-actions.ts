import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { PROCESS_CPU_WINDOW_MS } from './system-head.ts';

const percent = z.number().nullable();

const diskShape = z.object({
  mount: z.string(),
  fs_type: z.string(),
  total_bytes: z.number(),
  used_bytes: z.number(),
  usage_percent: z.number(),
});

export const systemStatus = defineAction({
  id: 'system.status',
  tool: 'system_status',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'system',
  title: 'System status',
  description: "A host's vital signs (OS, uptime, CPU, load, memory, disks, container counts) from the agent's sampler: cheap on any number of hosts.",
  input: z.object({}).strict(),
  output: z.object({
    schema_version: z.literal(1),
    hostname: z.string(),
    os: z.string(),
    kernel: z.string(),
    arch: z.string(),
    uptime_s: z.number(),
    cpu: z.object({
      usage_percent: percent.describe("The whole machine's CPU busy since the sampler's previous reading (a few seconds): 100 % is every core busy."),
      cores: z.number(),
      load_1: z.number(),
      load_5: z.number(),
      load_15: z.number(),
    }),
    memory: z.object({ total_bytes: z.number(), used_bytes: z.number(), available_bytes: z.number(), usage_percent: z.number() }),
    disks: z.array(diskShape),
    containers_running: z.number().nullable().describe('null when Docker could not be asked (see failed_collectors).'),
    containers_total: z.number().nullable(),
    sampled_at_unix_ms: z.number(),
  }),
  table: {
    columns: ['cpu.usage_percent', 'cpu.load_1', 'memory.usage_percent', 'memory.total_bytes', 'disks', 'uptime_s', 'containers_running'],
    legend:
      "cpu.usage_percent is the whole machine's CPU (100 % = every core busy); memory.usage_percent counts what is not available (MemTotal − MemAvailable); a disk's percent is used of what users may fill, as df shows it.",
  },
  widget: 'fleet-table',
  related: ['system.alerts', 'system.processes'],
});

const processShape = z.object({
  pid: z.number(),
  name: z.string(),
  user: z.string(),
  state: z.string(),
  cpu_percent: z
    .number()
    .describe(
      `Share of one CPU core over the ${PROCESS_CPU_WINDOW_MS} ms before the answer, as top shows it: 100 is one whole core, a process busy on two cores is at 200.`,
    ),
  mem_percent: z.number().describe("Resident memory as a share of the machine's."),
  rss_bytes: z.number(),
  container: z.string().nullable().describe('The container the process runs in, null for one of the host.'),
});

export const processes = defineAction({
  id: 'system.processes',
  tool: 'processes',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'system',
  title: 'Processes',
  description: "A host's busiest processes by CPU or memory, zombies and the count (never command lines).",
  input: z
    .object({
      limit: z.number().int().min(0).max(10_000).optional().describe('default 10; 0 for all'),
      sort_by: z.enum(['cpu', 'mem']).optional().describe('default cpu'),
    })
    .strict(),
  output: z.object({
    processes: z.array(processShape),
    zombies: z.array(processShape),
    total: z.number(),
    cpu_window_ms: z.number().nullable().describe('The window cpu_percent is measured over, ending at the answer.'),
    cpu_cores: z.number().nullable().describe('The CPUs of the host: cpu_percent goes up to 100 times this.'),
  }),
  table: {
    list: 'processes',
    columns: ['pid', 'name', 'container', 'user', 'cpu_percent', 'mem_percent', 'rss_bytes'],
    legend: `cpu_percent is the share of one core over the ${PROCESS_CPU_WINDOW_MS / 1000} s before the answer, as top shows it (100 % = one whole core; up to cores × 100 %).`,
  },
});

export const openPorts = defineAction({
  id: 'system.open_ports',
  tool: 'open_ports',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'system',
  title: 'Open ports',
  description: 'The ports a host listens on, with the process and container behind each.',
  input: z
    .object({
      port: z.number().int().min(1).max(65_535).optional(),
      protocol: z.enum(['tcp', 'udp']).optional(),
    })
    .strict(),
  output: z.object({
    ports: z.array(
      z.object({
        protocol: z.string(),
        address: z.string(),
        port: z.number(),
        pid: z.number().nullable(),
        process: z.string().nullable(),
        container: z.string().nullable().describe('The container that publishes the port, when Docker publishes it.'),
      }),
    ),
  }),
  table: { list: 'ports', columns: ['protocol', 'address', 'port', 'process', 'container'] },
});

const thresholdsInput = {
  cpu_threshold: z.number().min(1).max(100).optional(),
  memory_threshold: z.number().min(1).max(100).optional(),
  disk_threshold: z.number().min(1).max(100).optional(),
};

const alertStateShape = z.enum(['ok', 'warning', 'critical']);

export const alerts = defineAction({
  id: 'system.alerts',
  tool: 'alerts',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'system',
  title: 'Alerts',
  description:
    "CPU, memory and disks against thresholds (percent; default: the host's own), failed units: ok, warning or critical per host, with calls to run.",
  input: z.object(thresholdsInput).strict(),
  output: z.object({
    alerts: z.array(
      z.object({
        metric: z.string().describe('cpu, memory or disk; or what another domain watches on the host, whose row names its subject and has no percent.'),
        mount: z.string().optional(),
        subject: z.string().optional().describe("The thing a domain's row is about."),
        state: alertStateShape,
        detail: z.string().optional().describe("The thing's own word for its state."),
        since_unix_ms: z.number().nullable().optional().describe('Since when it is in that state.'),
        value_percent: z.number().nullable(),
        threshold_percent: z.number().nullable(),
      }),
    ),
    worst: alertStateShape,
    next_calls: z
      .array(z.object({ tool: z.string(), arguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])), reason: z.string() }))
      .describe("The exact calls that say why a domain's row is not ok, first the one to make first."),
  }),
  table: {
    list: 'alerts',
    columns: ['metric', 'mount', 'subject', 'state', 'detail', 'since_unix_ms', 'value_percent', 'threshold_percent'],
    details: ['next_calls'],
  },
  related: ['system.alerts_history'],
});

export const setAlertThresholds = defineAction({
  id: 'system.set_alert_thresholds',
  tool: 'set_alert_thresholds',
  risk: 'write',
  level: 2,
  runsOn: 'host',
  collector: 'system',
  title: 'Set alert thresholds',
  description: "Sets a host's CPU, memory and disk alert thresholds (percent) for alerts and crossings; kept over agent restarts. Omitted ones stay.",
  input: z.object(thresholdsInput).strict(),
  output: z.object({
    thresholds: z.object({ cpu_percent: z.number(), memory_percent: z.number(), disk_percent: z.number() }),
    changed: z.boolean(),
  }),
  idempotent: true,
  table: { columns: ['thresholds', 'changed'] },
  related: ['system.alerts'],
});

export const alertsHistory = defineAction({
  id: 'system.alerts_history',
  tool: 'alerts_history',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'system',
  title: 'Alert history',
  description: 'When CPU, memory or a disk crossed into warning or critical and back, newest first (last 1000 per agent).',
  input: z
    .object({
      since_unix_ms: z.number().int().min(0).optional(),
      limit: z.number().int().min(1).max(1000).optional().describe('default 100'),
    })
    .strict(),
  output: z.object({
    crossings: z.array(
      z.object({
        timestamp_unix_ms: z.number(),
        metric: z.enum(['cpu', 'memory', 'disk']),
        mount: z.string().optional(),
        value_percent: z.number(),
        threshold_percent: z.number(),
        state: alertStateShape,
      }),
    ),
  }),
  table: { list: 'crossings', columns: ['timestamp_unix_ms', 'metric', 'mount', 'state', 'value_percent', 'threshold_percent'] },
});

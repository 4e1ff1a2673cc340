import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { journalLineShape } from './journal-actions.ts';

/** A unit's name as systemd spells one: no path, no option, no space. */
export const UNIT_NAME = /^[A-Za-z0-9:_.\\@-]+$/;

const unitName = z.string().min(1).max(256).regex(UNIT_NAME).describe('A unit, such as nginx or nginx.service.');

/** Grants name a unit as `unit:HOST/NAME`. */
const unitResources = { kind: 'unit', param: 'name' } as const;

const unitRowShape = z.object({
  name: z.string(),
  description: z.string(),
  load_state: z.string().describe('loaded, not-found, masked…'),
  active_state: z.string().describe('active, failed, inactive, activating, deactivating.'),
  sub_state: z.string().describe('running, exited, dead, failed…'),
});

export const serviceList = defineAction({
  id: 'systemd.service_list',
  tool: 'service_list',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'systemd',
  title: 'Services',
  description: "Each host's systemd services with their active and sub state; state=failed finds the failed ones.",
  input: z
    .object({
      state: z.string().max(32).optional().describe('An active or sub state: failed, running, inactive…'),
      name: z.string().max(256).optional().describe('Name contains this.'),
    })
    .strict(),
  output: z.object({ units: z.array(unitRowShape), count: z.number() }),
  resources: { kind: 'unit', lists: [{ field: 'units', name: 'name', count: 'count' }] },
  table: { list: 'units', columns: ['name', 'active_state', 'sub_state', 'description'] },
  related: ['systemd.service_status'],
});

export const serviceStatus = defineAction({
  id: 'systemd.service_status',
  tool: 'service_status',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'systemd',
  title: 'Service status',
  description: "A unit's state and since when, main PID, memory and CPU of its cgroup, restarts, and its last journal lines.",
  input: z.object({ name: unitName, lines: z.number().int().min(0).max(100).optional().describe('Journal lines, default 10.') }).strict(),
  output: unitRowShape.extend({
    unit_file_state: z.string().nullable().describe('enabled, disabled, static…'),
    since_unix_ms: z.number().nullable().describe('When it entered its current state.'),
    main_pid: z.number().nullable(),
    memory_bytes: z.number().nullable().describe("Its cgroup's; null without memory accounting."),
    cpu_s: z.number().nullable().describe('CPU time of its cgroup; null without CPU accounting.'),
    tasks: z.number().nullable(),
    restarts: z.number().nullable().describe('Automatic restarts by systemd.'),
    result: z.string().nullable().describe('success, exit-code, signal, timeout…'),
    journal: z.array(journalLineShape).describe('Its newest lines, newest first.'),
  }),
  resources: unitResources,
  table: { list: 'journal', columns: ['timestamp', 'priority', 'text'] },
  related: ['systemd.journal_query', 'systemd.service_restart'],
});

const changeInput = z.object({ name: unitName }).strict();

const changeOutput = z.object({
  name: z.string(),
  job_result: z.string().describe("systemd's: done, failed, timeout, canceled, dependency, skipped."),
  active_state: z.string(),
  sub_state: z.string(),
  main_pid: z.number().nullable(),
});

/** Waits for systemd's job up to this long; a unit's own start timeout may be longer, and then the answer says the job was still running. */
export const SERVICE_JOB_WAIT_MS = 90_000;

const change = {
  runsOn: 'host',
  collector: 'systemd',
  level: 2,
  input: changeInput,
  output: changeOutput,
  resources: unitResources,
  table: { columns: ['name', 'job_result', 'active_state', 'sub_state', 'main_pid'] },
  waitsMs: () => SERVICE_JOB_WAIT_MS,
} as const;

export const serviceStart = defineAction({
  ...change,
  id: 'systemd.service_start',
  tool: 'service_start',
  risk: 'write',
  title: 'Start a service',
  description: "Starts a systemd unit and waits for its job: how it ended and the unit's state.",
  idempotent: true,
  related: ['systemd.service_status'],
});

export const serviceRestart = defineAction({
  ...change,
  id: 'systemd.service_restart',
  tool: 'service_restart',
  risk: 'write',
  title: 'Restart a service',
  description: "Restarts a systemd unit (starts it if stopped) and waits for its job: how it ended and the unit's state.",
  related: ['systemd.service_status'],
});

export const serviceStop = defineAction({
  ...change,
  id: 'systemd.service_stop',
  tool: 'service_stop',
  risk: 'destructive',
  title: 'Stop a service',
  description: 'Stops a systemd unit and waits for its job: what it serves is down until started.',
  idempotent: true,
  related: ['systemd.service_start'],
});

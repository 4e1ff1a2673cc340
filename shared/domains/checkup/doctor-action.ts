import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { DOCTOR_PARTS, TRUST_CHECKS } from '../parts.ts';

/** What a finding is about: a vocabulary, to branch on (and the categories of the trust checks and doctor checks domains declare). */
const FINDING_CATEGORIES = [
  ...new Set([
    'security',
    'exposure',
    'backup',
    'collectors',
    'certificate',
    'watch',
    'resources',
    ...TRUST_CHECKS.map((check) => check.category),
    ...DOCTOR_PARTS.flatMap((part) => part.categories),
  ]),
] as [string, ...string[]];

export const findingShape = z.object({
  check: z.string().describe('The check that found it (docker_socket_mount, public_port, backup_age…).'),
  severity: z.enum(['info', 'warning', 'critical']),
  category: z.enum(FINDING_CATEGORIES),
  subject: z.string().describe('The container, port, collector or file it is about.'),
  message: z.string(),
  action: z.string().describe('What to do about it, naming the fleetmesh tool when one helps.'),
});

export const doctor = defineAction({
  id: 'checkup.doctor',
  tool: 'doctor',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'checkup',
  title: 'Doctor',
  description:
    'Risks on a host: Docker socket mounts, ports open to all, stale backups, collectors down, certificate expiry, unverified APIs, blind watchers. pass/warn/fail.',
  input: z
    .object({
      backup_max_age_hours: z.number().int().min(1).max(87_600).optional().describe('Stale after (default 168).'),
    })
    .strict(),
  output: z.object({
    schema_version: z.literal(1),
    status: z.enum(['pass', 'warn', 'fail']).describe('fail: a critical finding; warn: a warning; pass: neither.'),
    critical_count: z.number(),
    warning_count: z.number(),
    findings: z.array(findingShape),
    checks: z.array(z.string()).describe('The checks that ran.'),
  }),
  table: { columns: ['status', 'critical_count', 'warning_count'], first: 'critical_count', details: ['findings'] },
  related: ['checkup.report', 'docker.inspect'],
});

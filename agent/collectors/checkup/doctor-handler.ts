import type { z } from 'zod';
import type { ActionOutput } from '../../../shared/catalog/action.ts';
import { agentInfo } from '../../../shared/domains/agent/agent-actions.ts';
import type { doctor, findingShape } from '../../../shared/domains/checkup/doctor-action.ts';
import { dockerInspect, dockerList } from '../../../shared/domains/docker/docker-actions.ts';
import type { CheckedHost } from '../../../shared/domains/domain-parts.ts';
import { DOCTOR_PARTS, TRUST_CHECKS } from '../../../shared/domains/parts.ts';
import type { ActionHandler, CallContext } from '../../dispatcher/dispatcher.ts';
import type { LocalCalls } from '../../dispatcher/local-calls.ts';
import { type BackupState, backupState } from './backup-age.ts';

type Finding = z.infer<typeof findingShape>;
type Info = ActionOutput<typeof agentInfo>;

const DEFAULT_BACKUP_MAX_AGE_HOURS = 168;
const HOUR_MS = 3_600_000;
/** The agent renews its certificate at half its life: one this close to expiry means renewal is not happening. */
const CERTIFICATE_WARNING_MS = 7 * 24 * HOUR_MS;
/** Collectors without which the host is barely seen; any other one missing is worth knowing, not a warning. */
const ESSENTIAL_COLLECTORS = new Set(['system', 'docker']);
const INSPECT_CONCURRENCY = 4;

function isDockerSocket(path: string): boolean {
  return /(^|\/)docker\.sock$/.test(path);
}

function isEveryAddress(ip: string | null): boolean {
  return ip === null || ip === '' || ip === '0.0.0.0' || ip === '::';
}

async function containerFindings(calls: LocalCalls, context: CallContext): Promise<{ findings: Finding[]; answered: boolean; absent: boolean }> {
  const list = await calls.run(dockerList, { all: true }, context);
  if (!list.payload) return { findings: [], answered: false, absent: list.absentCollectors.includes('docker') };
  const findings: Finding[] = [];
  for (const container of list.payload.containers) {
    const open = container.ports.filter((port) => port.public_port !== null && isEveryAddress(port.ip));
    for (const port of new Set(open.map((p) => `${p.public_port}/${p.protocol}`))) {
      findings.push({
        check: 'public_port',
        severity: 'warning',
        category: 'exposure',
        subject: `${container.name} ${port}`,
        message: `container ${container.name} publishes ${port} on every address of the host`,
        action: 'Publish it on 127.0.0.1 or a private address unless it must be reachable from everywhere; open_ports shows what listens.',
      });
    }
  }
  const queue = [...list.payload.containers];
  await Promise.all(
    Array.from({ length: Math.min(INSPECT_CONCURRENCY, queue.length) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const inspected = await calls.run(dockerInspect, { name: next.id }, context);
        const socket = inspected.payload?.mounts.find((m) => isDockerSocket(m.source) || isDockerSocket(m.destination));
        if (!socket) continue;
        findings.push({
          check: 'docker_socket_mount',
          severity: socket.rw ? 'critical' : 'warning',
          category: 'security',
          subject: next.name,
          message: `container ${next.name} mounts the Docker socket${socket.rw ? ' read-write' : ' read-only'} (${socket.destination}): it controls the engine, so the host`,
          action: 'Remove the mount, or give it a socket proxy that allows only what it needs; docker_inspect shows its mounts.',
        });
      }
    }),
  );
  return { findings, answered: true, absent: false };
}

function backupFindings(state: BackupState, maxAgeHours: number, now: number): Finding[] {
  const base = { check: 'backup_age', category: 'backup' as const, subject: 'backups' };
  if (!state.configured) {
    return [{ ...base, severity: 'info', message: 'backups are not configured on this host (no backup directory)', action: 'Create one with backup_create.' }];
  }
  if (state.newestUnixMs === null) {
    return [{ ...base, severity: 'warning', message: 'the backup directory holds no archive', action: 'Create one with backup_create.' }];
  }
  const ageHours = (now - state.newestUnixMs) / HOUR_MS;
  if (ageHours <= maxAgeHours) return [];
  return [
    {
      ...base,
      severity: 'warning',
      message: `the newest of ${state.archives} backups is ${Math.round(ageHours)} hours old (more than ${maxAgeHours})`,
      action: 'Run backup_create, then backup_drill to check the archive restores.',
    },
  ];
}

function agentFindings(info: Info, now: number): Finding[] {
  const findings: Finding[] = [];
  // Collectors absent here (nothing to collect on this host) are no finding: the answer lists them apart.
  const unavailable = info.collectors.filter((c) => !c.available && !c.absent);
  for (const collector of unavailable.filter((c) => ESSENTIAL_COLLECTORS.has(c.name))) {
    findings.push({
      check: 'collector_available',
      severity: 'warning',
      category: 'collectors',
      subject: collector.name,
      message: `the ${collector.name} collector is unavailable: ${collector.reason}`,
      action: "Its tools answer collector_unavailable on this host; agent_info shows every collector's state.",
    });
  }
  // The others (clusters, sandboxes, VM nodes…) are off on most hosts by design: one line says which.
  const optional = unavailable.filter((c) => !ESSENTIAL_COLLECTORS.has(c.name));
  if (optional.length) {
    findings.push({
      check: 'collector_available',
      severity: 'info',
      category: 'collectors',
      subject: optional.map((c) => c.name).join(', '),
      message: `unavailable here: ${optional.map((c) => `${c.name} (${c.reason})`).join('; ')}`,
      action: "agent_info shows every collector's state; each one's flags are in fleetmesh agent --help.",
    });
  }
  const left = info.certificate_not_after_unix_ms - now;
  if (left < CERTIFICATE_WARNING_MS) {
    findings.push({
      check: 'certificate_expiry',
      severity: left <= 0 ? 'critical' : 'warning',
      category: 'certificate',
      subject: 'agent certificate',
      message: left <= 0 ? 'the agent certificate has expired' : `the agent certificate expires in ${Math.round(left / HOUR_MS)} hours and was not renewed`,
      action: 'The agent renews it over its stream: check it stays connected, or enroll it again with a join token from fleetmesh token create.',
    });
  }
  // What the domains declare their collectors' setup may skip.
  for (const { check, category, subject, message, action, skipped } of TRUST_CHECKS) {
    if (skipped(info.facts)) findings.push({ check, severity: 'warning', category, subject, message, action });
  }
  const watch = info.collectors.find((c) => c.name === 'watch');
  const docker = info.collectors.find((c) => c.name === 'docker');
  if (watch?.available && docker && !docker.available && !docker.absent) {
    findings.push({
      check: 'watchers_blind',
      severity: 'warning',
      category: 'watch',
      subject: 'watch',
      message: 'the container watchers see nothing: the Docker engine does not answer',
      action: 'Fix the engine access (agent_info says why), then watch_check.',
    });
  }
  return findings;
}

/** doctor: what is wrong or risky on this host, from its own actions and its data dir. */
export function createDoctorHandler(calls: LocalCalls, backupDir: string): ActionHandler<typeof doctor> {
  return async (params, context) => {
    const now = Date.now();
    const [info, containers] = await Promise.all([calls.run(agentInfo, {}, context), containerFindings(calls, context)]);
    const checks = ['docker_socket_mount', 'public_port', 'backup_age'];
    const findings = [...containers.findings, ...backupFindings(backupState(backupDir), params.backup_max_age_hours ?? DEFAULT_BACKUP_MAX_AGE_HOURS, now)];
    const failed = containers.answered || containers.absent ? [] : ['docker'];
    if (info.payload) {
      checks.push('collector_available', 'certificate_expiry', ...TRUST_CHECKS.map((check) => check.check));
      if (info.payload.collectors.some((c) => c.name === 'watch')) checks.push('watchers_blind');
      findings.push(...agentFindings(info.payload, now));
      // What the domains declare they check on a host, through its own actions.
      const host: CheckedHost = { facts: info.payload.facts, collectors: info.payload.collectors, run: (action, input) => calls.run(action, input, context) };
      for (const examined of await Promise.all(DOCTOR_PARTS.map(async (part) => ({ part, ...(await part.examine(host)) })))) {
        if (examined.ran) checks.push(...examined.part.checks);
        // The report's part of a finding is not the doctor's.
        findings.push(...examined.findings.map(({ attention: _report, ...finding }) => finding as Finding));
        failed.push(...(examined.failed ?? []));
      }
    }
    const critical = findings.filter((f) => f.severity === 'critical').length;
    const warnings = findings.filter((f) => f.severity === 'warning').length;
    const rank = { critical: 0, warning: 1, info: 2 };
    return {
      payload: {
        schema_version: 1,
        status: critical ? 'fail' : warnings ? 'warn' : 'pass',
        critical_count: critical,
        warning_count: warnings,
        findings: findings.sort((a, b) => rank[a.severity] - rank[b.severity]),
        checks,
      },
      failedCollectors: failed,
      absentCollectors: info.payload?.collectors.filter((c) => !c.available && c.absent).map((c) => c.name) ?? [],
    };
  };
}

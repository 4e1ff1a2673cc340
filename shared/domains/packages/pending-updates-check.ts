import type { DoctorPart, HostFinding } from '../domain-parts.ts';
import { packageUpdates } from './package-actions.ts';

/** What refreshes each ecosystem's metadata on the host. */
const REFRESH = { dpkg: 'apt update', rpm: 'dnf makecache', apk: 'apk update' } as const;

/** Index files older than this tell of updates as they were then: apt update has not run for a week. */
const STALE_LISTS_S = 7 * 86_400;

/**
 * The doctor's check of a host's packages: a reboot it waits for, security
 * updates not installed, and index files too old to know of recent ones.
 * Hosts whose package manager keeps no index the agent reads are not checked.
 */
export const pendingUpdatesCheck: DoctorPart = {
  checks: ['reboot_required', 'security_updates', 'package_lists_age'],
  categories: ['updates'],
  async examine(host) {
    if (!host.collectors.some((collector) => collector.name === 'packages' && collector.available)) return { ran: false, findings: [] };
    const answer = await host.run(packageUpdates, {});
    if (!answer.payload) {
      // A host whose package manager the agent cannot read updates of is not a failure.
      const unsupported = answer.errors.some((error) => error.code === 'unsupported');
      return unsupported ? { ran: false, findings: [] } : { ran: true, findings: [], failed: ['packages'] };
    }
    const { ecosystem, reboot_required, reboot_packages, security_count, updates, metadata_age_s } = answer.payload;
    const findings: HostFinding[] = [];
    const base = { category: 'updates' };
    if (reboot_required) {
      findings.push({
        ...base,
        check: 'reboot_required',
        severity: 'warning',
        subject: 'reboot',
        message: `the host waits for a reboot${reboot_packages.length ? ` (asked for by ${reboot_packages.join(', ')})` : ''}: updates installed are not all in use`,
        action: 'Plan a reboot of the host; package_updates shows what else is pending.',
      });
    }
    if (security_count > 0) {
      const names = updates.filter((update) => update.security).map((update) => update.name);
      findings.push({
        ...base,
        check: 'security_updates',
        severity: 'warning',
        subject: 'security updates',
        message: `${security_count} security updates are not installed: ${names.slice(0, 5).join(', ')}${names.length > 5 ? '…' : ''}`,
        action: 'package_updates with security true lists them with their versions.',
      });
    }
    if (metadata_age_s !== null && metadata_age_s > STALE_LISTS_S) {
      findings.push({
        ...base,
        check: 'package_lists_age',
        severity: 'info',
        subject: 'package lists',
        message: `the host's package lists are ${Math.floor(metadata_age_s / 86_400)} days old: updates published since are not known`,
        action: `An operator runs ${REFRESH[ecosystem]} on the host (the agent fetches nothing).`,
      });
    }
    return { ran: true, findings };
  },
};

import { describe, expect, it } from 'vitest';
import { pathGlobs } from './path-globs.ts';

describe('the log paths an operator allows', () => {
  it('keep * within a folder, let ** cross folders, and take the rest literally', () => {
    const allowed = pathGlobs(['/var/log/*.log', '/srv/app/**', '/var/log/syslog']);
    expect(allowed('/var/log/nginx.log')).toBe(true);
    expect(allowed('/var/log/nginx/access.log')).toBe(false);
    expect(allowed('/var/log/syslog')).toBe(true);
    expect(allowed('/var/log/syslog.1')).toBe(false);
    expect(allowed('/srv/app/logs/today/app.txt')).toBe(true);
    expect(allowed('/etc/shadow')).toBe(false);
    expect(pathGlobs(['/var/log/a.log'])('/var/log/aXlog')).toBe(false);
    expect(pathGlobs([])('/var/log/syslog')).toBe(false);
  });
});

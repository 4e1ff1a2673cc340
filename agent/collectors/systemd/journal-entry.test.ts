import { describe, expect, it } from 'vitest';
import { journalLine, MAX_MESSAGE_CHARS } from './journal-entry.ts';

describe('a journal entry as journalctl --output=json gives it becomes one line of an answer', () => {
  it('reads the time, unit, priority, identifier, pid and message, and keeps the cursor to page on from', () => {
    const read = journalLine({
      __CURSOR: 's=abc;i=1',
      __REALTIME_TIMESTAMP: '1764790000123456',
      PRIORITY: '3',
      _SYSTEMD_UNIT: 'nginx.service',
      SYSLOG_IDENTIFIER: 'nginx',
      _PID: '812',
      MESSAGE: 'bind() to 0.0.0.0:80 failed',
    });
    expect(read).toEqual({
      line: {
        timestamp: '2025-12-03T19:26:40.123Z',
        unit: 'nginx.service',
        priority: 'err',
        identifier: 'nginx',
        pid: 812,
        text: 'bind() to 0.0.0.0:80 failed',
      },
      cursor: 's=abc;i=1',
      cut: false,
    });
  });

  it('decodes a message given as bytes, takes the first of a repeated field, and leaves out what is missing', () => {
    const { line } = journalLine({
      __REALTIME_TIMESTAMP: '1000000',
      MESSAGE: [...Buffer.from('tab\there')],
      UNIT: ['first.service', 'second.service'],
      _COMM: 'cron',
    });
    expect(line).toMatchObject({ text: 'tab\there', unit: 'first.service', identifier: 'cron', priority: null, pid: null });
  });

  it('gives the service manager’s lines about a unit that unit, as journalctl -u does', () => {
    const started = journalLine({ __REALTIME_TIMESTAMP: '1', _SYSTEMD_UNIT: 'init.scope', UNIT: 'fm-web.service', MESSAGE: 'Started fm-web.service.' });
    expect(started.line.unit).toBe('fm-web.service');
    const own = journalLine({ __REALTIME_TIMESTAMP: '1', _SYSTEMD_UNIT: 'init.scope', MESSAGE: 'Reached target multi-user.target.' });
    expect(own.line.unit).toBe('init.scope');
    // A service's own line keeps its writer whatever UNIT it sets.
    const claimed = journalLine({ __REALTIME_TIMESTAMP: '1', _SYSTEMD_UNIT: 'app.service', UNIT: 'sshd.service', MESSAGE: 'x' });
    expect(claimed.line.unit).toBe('app.service');
  });

  it('cuts a message past the limit and says so', () => {
    const read = journalLine({ __REALTIME_TIMESTAMP: '1', MESSAGE: 'x'.repeat(MAX_MESSAGE_CHARS + 10) });
    expect(read.cut).toBe(true);
    expect(read.line.text).toHaveLength(MAX_MESSAGE_CHARS + 1);
  });
});

import { describe, expect, it } from 'vitest';
import type { Host } from '../../agents/agent-registry.ts';
import type { IndexContext } from '../../index/indexer.ts';
import type { Notice } from '../../index/notice.ts';
import { UnitIndexer } from './unit-indexer.ts';

const host = { id: 'h-1', name: 'web-1' } as Host;

function unit(name: string, active_state: string, sub_state = active_state) {
  return { name, description: name, active_state, sub_state, since_unix_ms: active_state === 'failed' ? Date.UTC(2026, 0, 2, 3, 4, 5) : null };
}

function indexer(): { units: UnitIndexer; notices: Notice[] } {
  const notices: Notice[] = [];
  const context = { changed: () => undefined, notice: (notice: Notice) => notices.push(notice) } as unknown as IndexContext;
  return { units: new UnitIndexer(context), notices };
}

describe('UnitIndexer', () => {
  it('tells a failed unit as an alert notice once, when it fails, and again when it fails after recovering', () => {
    const { units, notices } = indexer();
    units.take(host, 'systemd_services', { units: [unit('nginx.service', 'active', 'running'), unit('backup.service', 'failed')] });
    expect(notices).toEqual([
      expect.objectContaining({
        event: 'alert',
        severity: 'warning',
        host: 'web-1',
        key: 'alert:h-1:unit:backup.service:failed',
        text: expect.stringContaining('"backup.service" failed at 2026-01-02T03:04:05.000Z (failed)'),
      }),
    ]);
    // Still failed in the next report: nothing new to tell.
    units.take(host, 'systemd_services', { units: [unit('nginx.service', 'active', 'running'), unit('backup.service', 'failed')] });
    expect(notices).toHaveLength(1);
    units.take(host, 'systemd_services', { units: [unit('nginx.service', 'failed'), unit('backup.service', 'active', 'running')] });
    units.take(host, 'systemd_services', { units: [unit('nginx.service', 'failed'), unit('backup.service', 'failed')] });
    expect(notices.map((notice) => notice.key)).toEqual([
      'alert:h-1:unit:backup.service:failed',
      'alert:h-1:unit:nginx.service:failed',
      'alert:h-1:unit:backup.service:failed',
    ]);
  });
});

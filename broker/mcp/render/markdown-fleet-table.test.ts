import { describe, expect, it } from 'vitest';
import { systemStatus } from '../../../shared/domains/system/system-actions.ts';
import { renderMarkdown } from './markdown.ts';

function node(host: string, cpuPercent: number, availability = 'available', failed: string[] = []) {
  return {
    host,
    availability,
    sampled_at_unix_ms: 1_700_000_000_000,
    failed_collectors: failed,
    errors: [],
    cpu: { usage_percent: cpuPercent, cores: 8, load_1: 0.4, load_5: 0.3, load_15: 0.2 },
    memory: { total_bytes: 8_200_000_000, used_bytes: 3_400_000_000, available_bytes: 4_800_000_000, usage_percent: 41.2 },
    disks: [{ mount: '/', fs_type: 'ext4', total_bytes: 100_000_000_000, used_bytes: 55_000_000_000, usage_percent: 55 }],
    uptime_s: 90_061,
    containers_running: failed.length ? null : 3,
  };
}

describe('fleet tables in answer text', () => {
  const envelope = {
    schema_version: 1,
    targeted: 3,
    responded: 3,
    hosts: [node('a-healthy', 12), node('b-hot', 97.5), node('c-partial', 10, 'partial', ['docker'])],
    errors: [],
  };

  it('leads with the hosts that need attention, worst first, and shows numbers with units', () => {
    const text = renderMarkdown(systemStatus, 'envelope', envelope);
    const order = ['c-partial', 'b-hot', 'a-healthy'].map((host) => text.indexOf(`\`${host}\``));
    expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(text).toContain('2 of 3 rows need attention');
    expect(text).toContain('97.5 %');
    expect(text).toContain('7.6 GiB');
    expect(text).toContain('1 d 1 h');
    expect(text).toContain('`docker`');
    // structuredContent is left as it was: raw numbers.
    expect(envelope.hosts[1]?.cpu.usage_percent).toBe(97.5);
  });

  it('says which page it is and how to get the next', () => {
    const text = renderMarkdown(systemStatus, 'envelope', {
      ...envelope,
      page: { number: 1, of: 4, first_host: 'a-healthy', last_host: 'c-partial' },
      next_cursor: 'abc',
    });
    expect(text).toContain('Page 1 of 4');
    expect(text).toContain('cursor="abc"');
  });

  it("says many failures by kind, naming some hosts of each, and the whole call's counts on a page", () => {
    const offline = Array.from({ length: 600 }, (_, i) => `web-${String(i).padStart(3, '0')}`);
    const errors = [
      ...offline.map((host) => ({ code: 'agent_offline', message: `agent ${host} is offline`, hint: 'Retry once the agent is online again.', host })),
      { code: 'internal', message: 'the agent answered with nothing', hint: 'Check the agent log on that host.', host: 'db-1' },
    ];
    const text = renderMarkdown(systemStatus, 'envelope', {
      ...envelope,
      targeted: 603,
      errors,
      error_counts: { agent_offline: 1200, internal: 1 },
    });
    expect(text).toContain("**Failures**: 1200 agent_offline, 1 internal in the whole call; those of this page's hosts (601):");
    expect(text).toContain(
      '- **agent_offline** on 600 hosts (`web-000`, `web-001`, `web-002`, `web-003`, `web-004`, `web-005`, `web-006`, `web-007` and 592 more): `agent web-000 is offline` (the first) (next: `Retry once the agent is online again.`)',
    );
    expect(text).toContain('- **internal** on 1 host (`db-1`)');
    expect(text.length).toBeLessThan(5_000);
  });
});

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
});

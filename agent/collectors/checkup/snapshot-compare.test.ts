import { describe, expect, it } from 'vitest';
import type { HostSnapshot, SnapshotContainer } from './host-snapshot.ts';
import { anythingChanged, compareSnapshots, needsAttention } from './snapshot-compare.ts';

function container(name: string, changes: Partial<SnapshotContainer> = {}): SnapshotContainer {
  return { id: `${name}-id`, name, image: 'nginx:1', state: 'running', health: null, restart_count: 0, ports: [], ...changes };
}

function snapshot(changes: Partial<HostSnapshot> = {}): HostSnapshot {
  return {
    schema_version: 1,
    taken_at_unix_ms: 1,
    containers: [container('web'), container('db')],
    listening: ['tcp 0.0.0.0:22'],
    disks: [{ mount: '/', usage_percent: 40 }],
    zombies: 0,
    cpu_percent: 10,
    memory_percent: 20,
    ...changes,
  };
}

describe('comparing report snapshots', () => {
  it('marks a section whose collector did not answer skipped, never its contents gone', () => {
    const changes = compareSnapshots(snapshot(), snapshot({ containers: null }));
    expect(changes).toEqual([{ kind: 'section_skipped', subject: 'docker', before: 'collected', after: 'not collected' }]);
    expect(anythingChanged(changes)).toBe(true);
  });

  it('sees nothing new in a section that was not collected then and is not now', () => {
    const changes = compareSnapshots(snapshot({ containers: null }), snapshot({ containers: null }));
    expect(changes).toEqual([{ kind: 'section_skipped', subject: 'docker', before: 'not collected', after: 'not collected' }]);
    expect(anythingChanged(changes)).toBe(false);
  });

  it('tells gone, new, replaced, image, state, ports and disk changes apart', () => {
    const after = snapshot({
      containers: [container('web', { id: 'other-id', image: 'nginx:2', ports: ['0.0.0.0:80->80/tcp'] }), container('cache', { state: 'exited' })],
      disks: [{ mount: '/', usage_percent: 47 }],
    });
    expect(compareSnapshots(snapshot(), after)).toEqual([
      { kind: 'container_gone', subject: 'db', before: 'running', after: null },
      { kind: 'container_replaced', subject: 'web', before: 'web-id', after: 'other-id' },
      { kind: 'image_changed', subject: 'web', before: 'nginx:1', after: 'nginx:2' },
      { kind: 'ports_changed', subject: 'web', before: '', after: '0.0.0.0:80->80/tcp' },
      { kind: 'container_new', subject: 'cache', before: null, after: 'exited' },
      { kind: 'disk_usage_changed', subject: '/', before: '40 %', after: '47 %' },
    ]);
    expect(needsAttention(after)).toEqual([{ kind: 'container_down', subject: 'cache', severity: 'warning', value: null }]);
  });

  it('finds a crash-looping container restarting when it restarted since the last report, even caught running', () => {
    const before = snapshot({ containers: [container('web'), container('crashy', { restart_count: 4 })] });
    const after = snapshot({ containers: [container('web'), container('crashy', { restart_count: 6 })] });
    expect(needsAttention(after, before)).toEqual([{ kind: 'container_restarting', subject: 'crashy', severity: 'critical', value: 6 }]);
    // The same count, or a new container in its place, is no restart.
    expect(needsAttention(before, before)).toEqual([]);
    expect(needsAttention(snapshot({ containers: [container('crashy', { id: 'other', restart_count: 6 })] }), before)).toEqual([]);
  });

  it('has nothing to compare on the first report', () => {
    expect(anythingChanged(compareSnapshots(undefined, snapshot({ listening: null })))).toBe(false);
  });
});

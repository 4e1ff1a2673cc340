import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AlertThresholds } from './alert-thresholds.ts';

const FLAGS = { cpu: 90, memory: 85, disk: 90 };

describe('a host’s alert thresholds', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fm-thresholds-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('are the flags until set, then what was set, after a restart too', () => {
    const first = new AlertThresholds(dir, FLAGS);
    expect(first.current).toEqual(FLAGS);
    const held = first.current;
    expect(first.set({ cpu: 70, memory: undefined })).toBe(true);
    // The same object, changed in place: whoever holds it sees the change.
    expect(held).toEqual({ cpu: 70, memory: 85, disk: 90 });
    expect(new AlertThresholds(dir, FLAGS).current).toEqual({ cpu: 70, memory: 85, disk: 90 });
  });

  it('say nothing changed when each given one is already so', () => {
    const thresholds = new AlertThresholds(dir, FLAGS);
    expect(thresholds.set({ cpu: 90 })).toBe(false);
    expect(thresholds.set({})).toBe(false);
  });

  it('keep the flags where the kept file holds no percent', () => {
    writeFileSync(join(dir, 'alert-thresholds.json'), '{"cpu": 400, "disk": "x", "memory": 60}');
    expect(new AlertThresholds(dir, FLAGS).current).toEqual({ cpu: 90, memory: 60, disk: 90 });
    writeFileSync(join(dir, 'alert-thresholds.json'), '{torn');
    expect(new AlertThresholds(dir, FLAGS).current).toEqual(FLAGS);
  });
});

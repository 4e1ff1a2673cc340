import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerStore, STORE_FILE } from './broker-store.ts';
import type { MetricRow } from './metrics-table.ts';
import { packRows, unpackRows } from './metrics-writer.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openStore(): Promise<{ store: BrokerStore; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fm-metrics-writer-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const store = await BrokerStore.open(dataDir);
  cleanups.push(() => store.close());
  return { store, dataDir };
}

/** A minute of `hosts` hosts of a dozen containers each, as the usage history writes it. */
function fleetMinute(hosts: number, minute: number): MetricRow[] {
  const rows: MetricRow[] = [];
  for (let h = 0; h < hosts; h++) {
    const hostId = `host-${h}`;
    rows.push({
      kind: 'host',
      entity: hostId,
      minute,
      host_id: hostId,
      name: `node-${h}`,
      service: null,
      cpu_percent: h % 100,
      memory_bytes: 2 ** 31,
      net_bytes_per_s: null,
      disk_percent: 41.5,
    });
    for (let c = 0; c < 12; c++) {
      rows.push({
        kind: 'container',
        entity: `${hostId}/c${c}`,
        minute,
        host_id: hostId,
        name: `web.${c}`,
        service: c % 3 ? 'web' : null,
        cpu_percent: c === 5 ? null : c / 4,
        memory_bytes: c * 1_000_000,
        net_bytes_per_s: c % 2 ? 1500 : null,
        disk_percent: null,
      });
    }
  }
  return rows;
}

describe('the metrics writer', () => {
  it('carries every figure and every missing one across to its thread unchanged', () => {
    const rows = fleetMinute(3, 120_000);
    expect(unpackRows(packRows(rows))).toEqual(rows);
    expect(unpackRows(packRows([]))).toEqual([]);
  });

  it("writes a fleet's minute on its own thread: the rows land while the broker's main thread is held", async () => {
    const { store, dataDir } = await openStore();
    const rows = fleetMinute(2_000, 60_000);
    const written = store.metrics.upsert(rows);
    // Held: nothing on this thread runs until the count is reached or 60 s pass. A write done on this thread
    // would not advance at all.
    const reader = new Database(join(dataDir, STORE_FILE), { readonly: true });
    cleanups.push(() => reader.close());
    const count = () => (reader.prepare('SELECT COUNT(*) AS n FROM metrics').get() as { n: number }).n;
    const until = Date.now() + 60_000;
    let seen = count();
    while (seen < rows.length && Date.now() < until) seen = count();
    expect(seen).toBe(rows.length);
    await written;
    const stored = await store.metrics.rows('host', { hostId: 'host-7' }, 0);
    expect(stored).toEqual([rows[7 * 13]]);
  });

  it('finishes the writes asked for before the store closes, so a stop loses no minute', async () => {
    const { store, dataDir } = await openStore();
    const rows = fleetMinute(500, 60_000);
    const written = store.metrics.upsert(rows);
    await store.close();
    await written;
    const again = await BrokerStore.open(dataDir, { create: false });
    cleanups.push(() => again.close());
    expect(await again.metrics.rows('container', {}, 0)).toHaveLength(500 * 12);
  });

  it('prunes on its thread too, and reports a write the store refused', async () => {
    const { store } = await openStore();
    await store.metrics.upsert([...fleetMinute(10, 60_000), ...fleetMinute(10, 180_000)]);
    await store.metrics.prune(120_000, 1_000_000);
    expect(new Set((await store.metrics.rows('host', {}, 0)).map((row) => row.minute))).toEqual(new Set([180_000]));
    const broken = { ...fleetMinute(1, 240_000)[0], entity: null } as unknown as MetricRow;
    await expect(store.metrics.upsert([broken])).rejects.toThrow(/NOT NULL/);
    await store.metrics.upsert(fleetMinute(1, 300_000));
    expect((await store.metrics.rows('host', {}, 300_000)).length).toBe(1);
  });
});

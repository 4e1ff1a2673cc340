import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import { BrokerStore } from '../store/broker-store.ts';
import type { MetricRow } from '../store/metrics-table.ts';
import { UsageHistory } from './usage-history.ts';

const MINUTE = 60_000;
const T0 = 1_796_000_040_000 - (1_796_000_040_000 % MINUTE);

/** A host as the registry holds it after a heartbeat: its sample and one container's figures. */
function heartbeat(at: number, cpu: number, traffic: { host: number | null; container: number | null } = { host: null, container: null }): Host {
  return {
    id: 'agent-1',
    name: 'web-1',
    sample: { sampled_at_unix_ms: at, cpu_percent: cpu, memory_used_bytes: 1000, net_rx_bytes: traffic.host, net_tx_bytes: traffic.host === null ? null : 0 },
    containerSamplesAt: at,
    containerSamples: [
      {
        id: 'c1',
        name: 'app',
        service: null,
        cpu_percent: cpu / 2,
        memory_usage_bytes: 10,
        net_rx_bytes: traffic.container,
        net_tx_bytes: traffic.container === null ? null : 0,
      },
    ],
  } as unknown as Host;
}

describe('usage history', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start() {
    const dir = mkdtempSync(join(tmpdir(), 'fm-usage-'));
    const store = await BrokerStore.open(dir);
    cleanups.push(
      () => rmSync(dir, { recursive: true, force: true }),
      () => store.close(),
    );
    const written: MetricRow[] = [];
    const upsert = store.metrics.upsert.bind(store.metrics);
    store.metrics.upsert = (rows) => {
      written.push(...rows);
      return upsert(rows);
    };
    const history = new UsageHistory(store, new EventEmitter() as unknown as AgentRegistry, silentLogger);
    return { store, history, written };
  }

  it('writes a minute once it is over, with its last figures, while readers see the minute so far', async () => {
    const { store, history, written } = await start();
    for (const [offset, cpu] of [
      [5_000, 10],
      [20_000, 20],
      [35_000, 30],
    ] as const) {
      history.observe(heartbeat(T0 + offset, cpu), T0 + offset);
      // The timer's flush during the minute writes nothing of it.
      await history.flush(T0);
    }
    expect(written).toEqual([]);

    history.observe(heartbeat(T0 + MINUTE + 5_000, 40), T0 + MINUTE + 5_000);
    await history.flush(T0 + MINUTE);
    expect(written.map((row) => [row.kind, row.minute, row.cpu_percent])).toEqual([
      ['host', T0, 30],
      ['container', T0, 15],
    ]);

    // A reader flushes the minute still filling, and sees it.
    const rows = await history.rows('host', { entities: ['agent-1'] }, 0);
    expect(rows.map((row) => [row.minute, row.cpu_percent])).toEqual([
      [T0, 30],
      [T0 + MINUTE, 40],
    ]);
    expect(await store.metrics.rows('container', {}, 0)).toHaveLength(2);
  });

  it('works out traffic rates from two readings, keeps a rate a later reading lacks, and starts over after a counter reset', async () => {
    const { history, written } = await start();
    history.observe(heartbeat(T0 + 5_000, 10, { host: 1_000, container: 100 }), T0 + 5_000);
    history.observe(heartbeat(T0 + 15_000, 10, { host: 21_000, container: 2_100 }), T0 + 15_000);
    // No counters in this reading: the minute keeps the rate it had.
    history.observe(heartbeat(T0 + 25_000, 10), T0 + 25_000);
    // The next minute's first reading after a reset has no rate.
    history.observe(heartbeat(T0 + MINUTE + 5_000, 10, { host: 500, container: 50 }), T0 + MINUTE + 5_000);
    history.observe(heartbeat(T0 + MINUTE + 10_000, 10, { host: 5_500, container: 550 }), T0 + MINUTE + 10_000);
    await history.flush();
    expect(written.map((row) => [row.kind, row.entity, row.minute, row.net_bytes_per_s])).toEqual([
      ['host', 'agent-1', T0, 2_000],
      ['container', 'agent-1/c1', T0, 200],
      ['host', 'agent-1', T0 + MINUTE, 1_000],
      ['container', 'agent-1/c1', T0 + MINUTE, 100],
    ]);
  });
});

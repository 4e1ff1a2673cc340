import { describe, expect, it } from 'vitest';
import { type BatchedReport, BusBatches } from './bus-batches.ts';
import { reportsMessage } from './bus-messages.ts';

const report = (agent: string, size = 10) => ({ agent, kind: 'container_inventory', payload: { note: 'x'.repeat(size) }, observedUnixMs: 1 });

describe('reports sent to the other brokers in batches', () => {
  it('sends the reports of 50 ms in one message the bus schema reads, and at once when they reach 256 KiB', async () => {
    const sent: string[] = [];
    const batches = new BusBatches<BatchedReport>({ broker: 'b1' }, 'reports', (json) => sent.push(json));
    batches.add(report('a1'));
    batches.add(report('a2'));
    expect(sent).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(sent).toHaveLength(1);
    expect(reportsMessage.parse(JSON.parse(sent[0] as string))).toEqual({ broker: 'b1', reports: [report('a1'), report('a2')] });

    // 100 KiB each: the third does not fit with the first two, which go without waiting.
    for (const agent of ['big1', 'big2', 'big3']) batches.add(report(agent, 100 * 1024));
    expect(sent).toHaveLength(2);
    expect(JSON.parse(sent[1] as string).reports.map((r: { agent: string }) => r.agent)).toEqual(['big1', 'big2']);
    batches.flush();
    expect(JSON.parse(sent[2] as string).reports.map((r: { agent: string }) => r.agent)).toEqual(['big3']);
    batches.flush();
    expect(sent).toHaveLength(3);
  });

  it('wraps items under any head and field, and waits as long as it is told', async () => {
    const sent: string[] = [];
    const batches = new BusBatches<{ n: number }>({}, 'items', (json) => sent.push(json), 5);
    batches.add({ n: 1 });
    batches.add({ n: 2 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(sent.map((json) => JSON.parse(json))).toEqual([{ items: [{ n: 1 }, { n: 2 }] }]);
  });
});

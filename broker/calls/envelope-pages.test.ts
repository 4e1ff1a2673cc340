import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { type HostNode, toEnvelope } from '../fanout/merge.ts';
import { pageOfEnvelope } from './envelope-pages.ts';

function fleet(hosts: number, rowsPerHost: number) {
  const nodes: HostNode[] = Array.from({ length: hosts }, (_, i) => ({
    host: `host-${String(i).padStart(3, '0')}`,
    availability: 'available',
    sampled_at_unix_ms: 1_700_000_000_000,
    failed_collectors: [],
    errors: [],
    containers: Array.from({ length: rowsPerHost }, (_, c) => ({
      id: `${i}-${c}`.padEnd(64, 'a'),
      name: `app-${c}`,
      image: `registry.example.com/app-${c}:1.0`,
    })),
  }));
  return toEnvelope(nodes);
}

describe('pageOfEnvelope', () => {
  it('answers a small fleet whole, without page or cursor', () => {
    const envelope = fleet(5, 3);
    expect(pageOfEnvelope(envelope, undefined)).toEqual(envelope);
  });

  it('pages an answer short in characters but long in tokens (text in scripts that take several tokens a character)', () => {
    const envelope = fleet(4, 1);
    for (const node of envelope.hosts) (node as HostNode & { note?: string }).note = 'ꙮ'.repeat(4000);
    expect(JSON.stringify(envelope).length).toBeLessThan(24_000);
    const page = pageOfEnvelope(envelope, undefined);
    expect(page.page?.of).toBeGreaterThan(1);
    expect(encode(JSON.stringify(page)).length).toBeLessThan(25_000);
  });

  /** Every page of an answer, followed by its cursors as a client would: each under the budget, numbered in order. */
  function walk(envelope: ReturnType<typeof fleet>) {
    const pages: ReturnType<typeof pageOfEnvelope>[] = [];
    let cursor: string | undefined;
    do {
      const page = pageOfEnvelope(envelope, cursor);
      pages.push(page);
      expect(encode(JSON.stringify(page)).length).toBeLessThan(25_000);
      expect(page.page?.number).toBe(pages.length);
      expect(page.targeted).toBe(envelope.targeted);
      cursor = page.next_cursor;
    } while (cursor);
    return { pages, seen: pages.flatMap((page) => page.hosts.map((node) => node.host)) };
  }

  it('pages a large fleet under the token budget, and the cursors walk every host exactly once', () => {
    const envelope = fleet(100, 30);
    const { pages, seen } = walk(envelope);
    expect(pages.length).toBeGreaterThan(1);
    expect(pageOfEnvelope(envelope, undefined).page?.of).toBe(pages.length);
    expect(seen).toEqual(envelope.hosts.map((node) => node.host));
  });

  it('keeps every page under the budget when the hosts it estimated from are lighter than the rest', () => {
    // Every third host (the ones sampled) is plain ASCII; the others take three tokens a character.
    const envelope = fleet(100, 1);
    envelope.hosts.forEach((node, i) => {
      (node as HostNode & { note?: string }).note = i % 3 === 0 ? 'a b '.repeat(500) : 'ꙮ'.repeat(2000);
    });
    const { pages, seen } = walk(envelope);
    pages.forEach((page, i) => {
      expect(page.page?.of).toBeGreaterThanOrEqual(i + 1 + (page.next_cursor ? 1 : 0));
    });
    expect(seen).toEqual(envelope.hosts.map((node) => node.host));
  });

  it("sends many failures with their hosts' pages, and counts the whole call's by code on each page", () => {
    // 3,000 hosts, every third one offline: 1,000 failures, about 60,000 tokens, more than any one page holds.
    const nodes: HostNode[] = fleet(3000, 1).hosts.map((node, i) =>
      i % 3 === 0
        ? {
            host: node.host,
            availability: 'unavailable',
            sampled_at_unix_ms: 1_700_000_000_000,
            failed_collectors: [],
            errors: [{ code: 'agent_offline', message: `agent ${node.host} is offline`, hint: 'Retry once the agent is online again.', host: node.host }],
          }
        : node,
    );
    const envelope = toEnvelope(nodes);
    expect(encode(JSON.stringify(envelope.errors)).length).toBeGreaterThan(25_000);
    const { pages, seen } = walk(envelope);
    expect(seen).toEqual(envelope.hosts.map((node) => node.host));
    for (const page of pages) {
      expect(page.error_counts).toEqual({ agent_offline: 1000 });
      const onPage = new Set(page.hosts.map((node) => node.host));
      expect(page.errors.length).toBeGreaterThan(0);
      expect(page.errors.every((error) => onPage.has(error.host ?? ''))).toBe(true);
    }
    expect(pages.flatMap((page) => page.errors)).toEqual(envelope.errors);
  });

  it('keeps a few failures whole on every page', () => {
    const envelope = fleet(100, 30);
    (envelope.hosts[99] as HostNode).errors = [{ code: 'internal', message: 'broken', hint: 'Look at the agent log.', host: 'host-099' }];
    envelope.errors = [{ code: 'internal', message: 'broken', hint: 'Look at the agent log.', host: 'host-099' }];
    const { pages } = walk(envelope);
    for (const page of pages) {
      expect(page.errors).toHaveLength(1);
      expect(page).not.toHaveProperty('error_counts');
    }
  });

  it('refuses a cursor it did not give, naming what to do', () => {
    expect(() => pageOfEnvelope(fleet(100, 30), 'not-a-cursor')).toThrow(FleetError);
  });
});

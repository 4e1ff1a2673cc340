import { describe, expect, it } from 'vitest';
import { inventoryExport } from '../../../shared/domains/checkup/inventory-actions.ts';
import { report } from '../../../shared/domains/checkup/report-action.ts';
import { renderMarkdown } from './markdown.ts';

function node(host: string, fields: Record<string, unknown>, availability = 'available') {
  return { host, availability, sampled_at_unix_ms: 1_700_000_000_000, failed_collectors: [], errors: [], ...fields };
}

function envelope(hosts: Record<string, unknown>[]) {
  return { schema_version: 1, targeted: hosts.length, responded: hosts.length, hosts, errors: [] };
}

describe("an action's own view and lead rows in answer text", () => {
  it('leads with the rows the action puts first, before rows that only need attention', () => {
    const text = renderMarkdown(
      report,
      'envelope',
      envelope([
        node('a-quiet', { status: 'critical', changed: false }),
        node('b-changed', { status: 'ok', changed: true }),
        node('c-quiet', { status: 'ok', changed: false }),
      ]),
    );
    const order = ['b-changed', 'a-quiet', 'c-quiet'].map((host) => text.indexOf(`\`${host}\``));
    expect(order).toEqual([...order].sort((x, y) => x - y));
  });

  it('adds the view as one fenced block no fleet text can close', () => {
    const containers = [{ name: 'web```\n# heading', image: 'nginx', state: 'running', ports: [] }];
    const text = renderMarkdown(inventoryExport, 'envelope', envelope([node('h1', { format: 'mermaid', containers })]));
    const fences = text.split('\n').filter((line) => line.startsWith('```'));
    expect(fences).toEqual(['```mermaid', '```']);
    expect(text).not.toContain('\n# heading');
    const json = renderMarkdown(inventoryExport, 'envelope', envelope([node('h1', { format: 'json', containers })]));
    expect(json).not.toContain('```mermaid');
  });
});

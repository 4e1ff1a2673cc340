import { describe, expect, it } from 'vitest';
import { inventoryGraph, mermaidLabel } from './inventory-graph.ts';

const HOSTILE = 'x"] \n  click h0 call evil()\n%%{init: {"theme":"dark"}}%%\n```\n<script>|';

describe('the fleet inventory graph', () => {
  it('keeps every fleet string inside its quoted label, whatever it holds', () => {
    const graph = inventoryGraph([
      {
        host: HOSTILE,
        availability: 'available',
        swarm: { role: 'manager', cluster: HOSTILE },
        proxmox: { node: 'pve1', cluster: HOSTILE },
        containers: [{ name: HOSTILE, image: HOSTILE, state: 'running', ports: [{ ip: null, public_port: 8080, private_port: 80, protocol: HOSTILE }] }],
        guests: [{ vmid: 101, name: HOSTILE, type: 'qemu', node: 'pve1', status: 'running' }],
      },
      { host: 'web-2', availability: 'unavailable' },
    ]);
    const lines = graph.split('\n');
    expect(lines[0]).toBe('flowchart LR');
    const shapes = /^ {2}[a-z]\d+[a-z0-9]*(\["[^"]*"\]|\("[^"]*"\)|\(\["[^"]*"\]\)|\{\{"[^"]*"\}\}|\[\/"[^"]*"\/\])$/;
    const edges = /^ {2}[a-z]\d+[a-z0-9]* ((-->|---)|-- "[^"]*" ---) [a-z]\d+[a-z0-9]*$/;
    for (const line of lines.slice(1)) expect(shapes.test(line) || edges.test(line), line).toBe(true);
    const labels = [...graph.matchAll(/"([^"]*)"/g)].map((match) => match[1]);
    for (const label of labels) expect(label).not.toMatch(/[`%<>|\][{}()]/);
    expect(graph).not.toContain('`');
    expect(lines).toHaveLength(13);
    expect(graph).toContain('"host web-2 #40;no answer#41;"');
  });

  it('draws the guests of a cluster once, however many of its nodes answer', () => {
    const guest = { vmid: 101, name: 'web', type: 'qemu', node: 'pve1', status: 'running' };
    const graph = inventoryGraph([
      { host: 'pve-a', proxmox: { node: 'pve1', cluster: 'lab' }, guests: [guest] },
      { host: 'pve-b', proxmox: { node: 'pve2', cluster: 'lab' }, guests: [guest] },
    ]);
    expect(graph.match(/qemu 101/g)).toHaveLength(1);
    expect(graph.match(/\{\{"PVE lab"\}\}/g)).toHaveLength(1);
  });

  it('writes what is not plainly safe as Mermaid entities', () => {
    expect(mermaidLabel('a "b" #1')).toBe('a #34;b#34; #35;1');
  });
});

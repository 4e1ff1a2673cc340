import type { GraphDraw, GraphShape, InventoryPart } from '../domain-parts.ts';
import { INVENTORY_PARTS } from '../parts.ts';

/**
 * One Mermaid flowchart of every host answered: hosts, then each domain's
 * part of them (containers and published ports, cluster memberships, guests).
 * Node ids are made here and by the parts (h0, h0c1…), never taken from the
 * fleet; every label is fleet text, quoted with every character outside a
 * small safe set written as a Mermaid entity (`#35;`), so no name, image or
 * tag can end a label, start a directive, add a click handler or close the
 * Markdown fence around the graph.
 */

const MAX_LABEL = 80;

const BRACKETS: Record<GraphShape, [string, string]> = {
  box: ['[', ']'],
  round: ['(', ')'],
  stadium: ['([', '])'],
  hexagon: ['{{', '}}'],
  slanted: ['[/', '/]'],
};

/** Fleet text as the inside of a quoted Mermaid label. */
export function mermaidLabel(text: string): string {
  const short = text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL - 1)}…` : text;
  return short.replace(/[^A-Za-z0-9 _.,:/@+=-]/gu, (c) => `#${c.codePointAt(0)};`);
}

function node(id: string, label: string, shape: GraphShape): string {
  const [open, close] = BRACKETS[shape];
  return `  ${id}${open}"${mermaidLabel(label)}"${close}`;
}

export function inventoryGraph(answers: readonly Record<string, unknown>[], parts: readonly InventoryPart[] = INVENTORY_PARTS): string {
  const hosts = [...answers].sort((a, b) => String(a.host).localeCompare(String(b.host)));
  const lines = ['flowchart LR'];
  const drawers = parts.flatMap((part) => (part.graph ? [part.graph()] : []));
  hosts.forEach((host, h) => {
    const id = `h${h}`;
    lines.push(node(id, `host ${String(host.host)}${host.availability === 'unavailable' ? ' (no answer)' : ''}`, 'box'));
    const draw: GraphDraw = {
      host: id,
      node: (nodeId, label, shape) => lines.push(node(nodeId, label, shape)),
      edge: (from, to, line, label) => lines.push(label === undefined ? `  ${from} ${line} ${to}` : `  ${from} -- "${mermaidLabel(label)}" ${line} ${to}`),
    };
    for (const drawer of drawers) drawer(host, draw);
  });
  return lines.join('\n');
}

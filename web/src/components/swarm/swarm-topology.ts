import { h, replace, svg } from '../../dom.ts';

/** get_topology's answer. */
export interface TopologyAnswer {
  view: string;
  nodes: { id: string; name: string; type: string; detail?: string }[];
  edges: { from: string; to: string; detail?: string }[];
  stranded?: { service: string; detail: string }[];
  note?: string;
}

type Vertex = TopologyAnswer['nodes'][number];

const ROW_PX = 44;
const BOX_W = 200;
const BOX_H = 34;
const COLUMN_GAP = 140;

/** Which column a vertex sits in: what a view reads from, what it leads to, and (drain impact) where tasks could go. */
function columnOf(view: string, vertex: Vertex): number {
  if (view === 'network') return vertex.type === 'service' ? 0 : 1;
  if (view === 'drain-impact') return vertex.type === 'service' ? 1 : vertex.detail === 'to drain' ? 0 : 2;
  return vertex.type === 'node' ? 0 : 1;
}

/**
 * A swarm as columns of boxes joined by lines: nodes and the services they run
 * (placement), services on their networks, or what draining a node would do
 * (services that would be stranded are marked red). SVG, so it scales and
 * its text stays text.
 */
export class SwarmTopology {
  readonly element = h('section', { class: 'swarm-topology' });

  update(answer: TopologyAnswer): void {
    const columns: Vertex[][] = [[], [], []];
    for (const vertex of answer.nodes) columns[columnOf(answer.view, vertex)]?.push(vertex);
    const used = columns.filter((c) => c.length > 0).length || 1;
    const rows = Math.max(1, ...columns.map((c) => c.length));
    const width = used * BOX_W + (used - 1) * COLUMN_GAP + 20;
    const height = rows * ROW_PX + 20;
    const stranded = new Set((answer.stranded ?? []).map((s) => s.service));
    const position = new Map<string, { x: number; y: number }>();
    let x = 10;
    const boxes: SVGElement[] = [];
    for (const column of columns) {
      if (column.length === 0) continue;
      column.sort((a, b) => a.name.localeCompare(b.name));
      column.forEach((vertex, row) => {
        const y = 10 + row * ROW_PX;
        position.set(vertex.name, { x, y });
        const classes = ['vertex', `vertex-${vertex.type}`, stranded.has(vertex.name) ? 'stranded' : ''].join(' ').trim();
        boxes.push(
          svg(
            'g',
            { class: classes, 'data-name': vertex.name, 'data-type': vertex.type, transform: `translate(${x},${y})` },
            svg('rect', { width: BOX_W, height: BOX_H, rx: 6 }),
            svg('text', { x: 8, y: 14, class: 'vertex-name' }, vertex.name),
            svg('text', { x: 8, y: 28, class: 'vertex-detail' }, (vertex.detail ?? vertex.type).slice(0, 34)),
          ),
        );
      });
      x += BOX_W + COLUMN_GAP;
    }
    const lines = answer.edges.flatMap((edge) => {
      const from = position.get(edge.from);
      const to = position.get(edge.to);
      if (!from || !to) return [];
      const [left, right] = from.x <= to.x ? [from, to] : [to, from];
      const x1 = left.x + BOX_W;
      const y1 = left.y + BOX_H / 2;
      const x2 = right.x;
      const y2 = right.y + BOX_H / 2;
      const mid = (x1 + x2) / 2;
      return [
        svg('path', { class: 'edge', d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}` }),
        ...(edge.detail ? [svg('text', { class: 'edge-label', x: mid, y: (y1 + y2) / 2 - 3 }, edge.detail)] : []),
      ];
    });
    replace(
      this.element,
      h('p', { class: 'topology-caption' }, `${answer.view}: ${answer.nodes.length} vertices, ${answer.edges.length} links`),
      svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': `swarm ${answer.view}` }, ...lines, ...boxes),
      answer.stranded?.length
        ? h('ul', { class: 'stranded-list' }, ...answer.stranded.map((s) => h('li', {}, h('strong', {}, s.service), ': ', s.detail)))
        : null,
      answer.note ? h('p', { class: 'note' }, answer.note) : null,
    );
  }
}

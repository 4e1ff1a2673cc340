import { callOrThrow } from '../../call-tool.ts';
import { panZoom } from '../../components/pan-zoom.ts';
import { SwarmTopology, type TopologyAnswer } from '../../components/swarm/swarm-topology.ts';
import { h, replace } from '../../dom.ts';
import type { Widget, WidgetContext } from '../widget.ts';

const VIEWS = ['placement', 'network', 'drain-impact'] as const;

/**
 * The swarm as a picture that can be panned and zoomed, with a switch between
 * its views; each switch, and a click on a node (what draining it would do),
 * asks the swarm again through the host with get_topology.
 */
function topologyWidget(): Widget {
  const element = h('div', { class: 'widget topology-widget' });
  const status = h('span', { class: 'topology-status', role: 'status' });
  const topology = new SwarmTopology();
  let context: WidgetContext | undefined;
  let args: Record<string, unknown> = {};

  const toolbar = h('div', { class: 'topology-toolbar', role: 'toolbar', 'aria-label': 'topology view' });
  const draw = (answer: TopologyAnswer) => {
    topology.update(answer);
    replace(
      toolbar,
      ...VIEWS.map((view) =>
        h(
          'button',
          {
            type: 'button',
            class: view === answer.view ? 'selected' : undefined,
            'aria-pressed': String(view === answer.view),
            'data-view': view,
            disabled: view === 'drain-impact' && answer.view !== 'drain-impact' && !args.node,
            title: view === 'drain-impact' ? 'click a node to see what draining it would do' : undefined,
            onclick: () => void ask({ view, ...(view === 'drain-impact' && args.node ? { node: args.node } : {}) }),
          },
          view,
        ),
      ),
      h('button', { type: 'button', 'aria-label': 'zoom in', onclick: () => zoom?.zoom(1.2) }, '+'),
      h('button', { type: 'button', 'aria-label': 'zoom out', onclick: () => zoom?.zoom(1 / 1.2) }, '−'),
      h('button', { type: 'button', 'aria-label': 'fit', onclick: () => zoom?.reset() }, 'fit'),
      status,
    );
    const picture = topology.element.querySelector('svg');
    zoom = picture ? panZoom(picture as SVGSVGElement) : undefined;
    for (const vertex of topology.element.querySelectorAll<SVGGElement>('g[data-type="node"]')) {
      vertex.style.cursor = 'pointer';
      vertex.addEventListener('dblclick', () => void ask({ view: 'drain-impact', node: vertex.dataset.name }));
    }
  };
  let zoom: ReturnType<typeof panZoom> | undefined;

  const ask = async (next: Record<string, unknown>) => {
    if (!context) return;
    const wanted = { ...(args.cluster ? { cluster: args.cluster } : {}), ...next };
    status.textContent = `asking for ${String(next.view)}…`;
    try {
      const answer = (await callOrThrow(context.call, 'get_topology', wanted)) as unknown as TopologyAnswer;
      args = wanted;
      draw(answer);
      status.textContent = '';
    } catch (error) {
      status.textContent = (error as Error).message;
    }
  };

  return {
    element,
    show(answer, given) {
      context = given;
      args = given.input;
      if (answer.error) return replace(element, h('p', { class: 'widget-error' }, answer.error.message));
      replace(
        element,
        toolbar,
        topology.element,
        h('p', { class: 'hint' }, 'Drag to pan, wheel or + − to zoom; double-click a node to see what draining it would do.'),
      );
      draw(answer.structured as unknown as TopologyAnswer);
    },
  };
}

/** The swarm's widgets, by the names its broker half declares. */
export const domainWidgets: Readonly<Record<string, () => Widget>> = { 'swarm-topology': topologyWidget };

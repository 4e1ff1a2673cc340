import { SwarmTopology, type TopologyAnswer } from '../../components/swarm/swarm-topology.ts';
import { h, replace } from '../../dom.ts';
import type { Widget } from '../widget.ts';

function topologyWidget(): Widget {
  const element = h('div', { class: 'widget topology-widget' });
  return {
    element,
    show(answer) {
      if (answer.error) return replace(element, h('p', { class: 'widget-error' }, answer.error.message));
      const topology = new SwarmTopology();
      topology.update(answer.structured as unknown as TopologyAnswer);
      replace(element, topology.element);
    },
  };
}

/** The swarm's widgets, by the names its broker half declares. */
export const domainWidgets: Readonly<Record<string, () => Widget>> = { 'swarm-topology': topologyWidget };

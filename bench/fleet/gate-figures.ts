import type { Broker } from '../../broker/broker.ts';

/** A broker's admission gate, flat: what waits at each stage, and how connections left it so far. */
export function gateFigures(broker: Pick<Broker, 'mesh'>): Record<string, number> {
  const figures = broker.mesh.admission();
  if (!figures) return {};
  return {
    ...Object.fromEntries(Object.entries(figures.pending).map(([stage, count]) => [`gate_${stage}`, count])),
    gate_handed_over: figures.handedOver,
    ...Object.fromEntries(Object.entries(figures.outcomes).map(([outcome, count]) => [`gate_${outcome}`, count])),
  };
}

import type { AdmissionGate } from './admission-gate.ts';

/**
 * The admission gate's figures in the Prometheus text format: connections
 * pending at the agents' port by stage, handed to TLS, and how each left the
 * gate. A fleet dialling at once shows here as waiting connections drained
 * at the admission rate; handshake timeouts that climb with them say the
 * broker hands over more than it can handshake.
 */
export function admissionMetrics(figures: ReturnType<AdmissionGate['figures']> | undefined): string {
  if (!figures) return '';
  return [
    "# HELP fleetmesh_admission_pending Connections at the agents' port not yet established, by stage: hello (first bytes awaited), waiting (for a turn), handshake (TLS and first call).",
    '# TYPE fleetmesh_admission_pending gauge',
    ...Object.entries(figures.pending).map(([stage, count]) => `fleetmesh_admission_pending{stage="${stage}"} ${count}`),
    '# HELP fleetmesh_admission_handed_over_total Connections handed to TLS at their turn.',
    '# TYPE fleetmesh_admission_handed_over_total counter',
    `fleetmesh_admission_handed_over_total ${figures.handedOver}`,
    '# HELP fleetmesh_admission_connections_total Connections that left the admission gate, by outcome.',
    '# TYPE fleetmesh_admission_connections_total counter',
    ...Object.entries(figures.outcomes).map(([outcome, count]) => `fleetmesh_admission_connections_total{outcome="${outcome}"} ${count}`),
    '',
  ].join('\n');
}

import type { Host } from '../agents/agent-registry.ts';
import type { CaSet } from './ca-set.ts';
import type { ServingIdentity } from './serving-certificate.ts';

interface CertificateFigures {
  set: CaSet;
  serving: ServingIdentity;
  /** Serving certificates this broker has issued for itself since it started. */
  servingRenewals: number;
  /** Agent certificates renewed over streams of this broker since it started. */
  agentRenewals: number;
  hosts: readonly Host[];
  /** The CA of each agent stream held here (AgentSession.caPin). */
  caPins: readonly string[];
}

/** A pin short enough for a label: `sha256:` and 16 hex digits. */
const shortPin = (pin: string) => pin.slice(0, 23);

/**
 * The certificates' figures in the Prometheus text format: when this broker's
 * serving certificate expires and how often it was renewed, the soonest expiry
 * among agents' certificates, agent renewals, the rotation phase, and the
 * agents held here by the CA of their stream.
 */
export function certificateMetrics(figures: CertificateFigures): string {
  const expiries = figures.hosts.flatMap((host) => (host.certNotAfter === null ? [] : [host.certNotAfter]));
  const byCa = new Map<string, number>();
  for (const pin of figures.caPins) byCa.set(pin, (byCa.get(pin) ?? 0) + 1);
  return [
    "# HELP fleetmesh_server_certificate_expiry_timestamp_seconds When this broker's serving certificate expires (it is renewed between half and two thirds of its life).",
    '# TYPE fleetmesh_server_certificate_expiry_timestamp_seconds gauge',
    `fleetmesh_server_certificate_expiry_timestamp_seconds{ca="${shortPin(figures.serving.caPin)}"} ${Math.floor(figures.serving.notAfter.getTime() / 1000)}`,
    '# HELP fleetmesh_server_certificate_renewals_total Serving certificates this broker issued for itself since it started (the first included).',
    '# TYPE fleetmesh_server_certificate_renewals_total counter',
    `fleetmesh_server_certificate_renewals_total ${figures.servingRenewals}`,
    "# HELP fleetmesh_agent_certificate_expiry_soonest_timestamp_seconds The soonest expiry among enrolled agents' current certificates.",
    '# TYPE fleetmesh_agent_certificate_expiry_soonest_timestamp_seconds gauge',
    `fleetmesh_agent_certificate_expiry_soonest_timestamp_seconds ${expiries.length ? Math.floor(Math.min(...expiries) / 1000) : 0}`,
    '# HELP fleetmesh_agent_certificate_renewals_total Agent certificates renewed over streams of this broker since it started.',
    '# TYPE fleetmesh_agent_certificate_renewals_total counter',
    `fleetmesh_agent_certificate_renewals_total ${figures.agentRenewals}`,
    '# HELP fleetmesh_ca_rotation_phase The phase of the CA rotation (1 for the current one).',
    '# TYPE fleetmesh_ca_rotation_phase gauge',
    `fleetmesh_ca_rotation_phase{phase="${figures.set.phase}"} 1`,
    '# HELP fleetmesh_agent_streams_by_ca Agent streams held here, by the CA of the certificate each was opened with.',
    '# TYPE fleetmesh_agent_streams_by_ca gauge',
    ...[...byCa].map(([pin, count]) => `fleetmesh_agent_streams_by_ca{ca="${shortPin(pin)}"} ${count}`),
    '',
  ].join('\n');
}

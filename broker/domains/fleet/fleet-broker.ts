import { fleetDomain } from '../../../shared/domains/fleet/fleet-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { describeResourceHandler, findResourcesHandler } from './find-describe.ts';
import { FLEET_PROMPTS } from './fleet-prompts.ts';
import { fleetStatusHandler } from './fleet-status.ts';
import { getMetricsHandler } from './get-metrics.ts';
import { listAgentsHandler } from './list-agents.ts';
import { recommendationsHandler } from './recommendations.ts';
import { revokeAgentsHandler } from './revoke-agents.ts';

/** What the broker answers itself of its agents and its index of the fleet. */
export const fleetBroker: BrokerDomain = {
  domain: fleetDomain,
  actions: [
    fleetStatusHandler,
    listAgentsHandler,
    revokeAgentsHandler,
    findResourcesHandler,
    describeResourceHandler,
    getMetricsHandler,
    recommendationsHandler,
  ],
  resources: [
    {
      template: 'hosts/{host}',
      name: 'host',
      title: 'Host',
      description: 'A host digest: state, facts, collectors, its latest sample.',
      type: 'host',
      content: 'digest',
    },
  ],
  prompts: FLEET_PROMPTS,
  // The components any domain's answers may show in.
  widgets: [
    { name: 'fleet-table', title: 'Fleet table: hosts or containers, sortable, status colours' },
    { name: 'metrics-chart', title: 'Metrics chart: CPU, memory or network over 1h to 7d' },
    { name: 'log-viewer', title: 'Log viewer: stdout and stderr, search, follows new lines' },
    { name: 'recommendations', title: 'Recommendations: what to fix in the fleet, with the fixing tool' },
    { name: 'find-results', title: 'Find results: resources grouped by type, searchable, each one described on a click' },
  ],
};

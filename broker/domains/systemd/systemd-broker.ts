import { systemdDomain } from '../../../shared/domains/systemd/systemd-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { failedUnitFindings } from './failed-units.ts';
import { UnitIndexer } from './unit-indexer.ts';

/** The hosts' systemd units as their agents report them: findable, and the failed ones recommended for a look. */
export const systemdBroker: BrokerDomain = {
  domain: systemdDomain,
  indexer: UnitIndexer,
  findings: failedUnitFindings,
  instructions:
    "Instead of SSH: journal_query and journal_search read the hosts' systemd journal, service_status and service_restart a unit (a name such as nginx means nginx.service).",
};

import { systemDomain } from '../../../shared/domains/system/system-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { dockerPlugin } from '../docker/docker-plugin.ts';
import { ownsPidNamespace } from './own-pid-namespace.ts';
import { SystemCollector } from './system-collector.ts';
import { systemInfo } from './system-info.ts';

/** The host itself, on every agent: status, processes, ports, alerts. */
export const systemPlugin: CollectorPlugin<SystemCollector> = {
  domain: systemDomain,
  create: ({ options, sampler, hooks, use }) =>
    new SystemCollector({
      sampler,
      si: systemInfo(),
      thresholds: options.alertThresholds,
      dataDir: options.dataDir,
      containers: use(dockerPlugin),
      hostProc: options.hostProc,
      containerOnly: options.hostProc === undefined && ownsPidNamespace(),
      report: hooks.report,
    }),
};

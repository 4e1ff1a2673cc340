import { systemHead } from '../../../shared/domains/system/system-head.ts';
import { ContainerFacts } from '../../engine/container-facts.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { ownsPidNamespace } from './own-pid-namespace.ts';
import { SystemCollector } from './system-collector.ts';
import { systemInfo } from './system-info.ts';

/** The host itself, on every agent: status, processes, ports, alerts. */
export const systemPlugin: CollectorPlugin<SystemCollector> = {
  domain: systemHead,
  create: ({ options, sampler, hooks, engine }) => {
    const containerOnly = options.hostProc === undefined && ownsPidNamespace();
    return new SystemCollector({
      sampler,
      si: systemInfo(),
      thresholds: options.alertThresholds,
      dataDir: options.dataDir,
      containers: new ContainerFacts(engine),
      hostProc: options.hostProc,
      // On the host itself, its /proc is the agent's own.
      ...(options.hostProc === undefined && !containerOnly && process.platform === 'linux' ? { ownProc: '/proc' } : {}),
      containerOnly,
      report: hooks.report,
    });
  },
};

import { sandboxDomain } from '../../../shared/domains/sandbox/sandbox-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { SandboxCollector } from './sandbox-collector.ts';

/** The containers labelled as sandboxes. */
export const sandboxPlugin: CollectorPlugin<SandboxCollector> = {
  domain: sandboxDomain,
  create: ({ flags, log, engine }) => new SandboxCollector({ docker: engine, log, label: flags['sandbox-label'] }),
};

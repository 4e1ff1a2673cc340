import { sandboxHead } from '../../../shared/domains/sandbox/sandbox-head.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { SandboxCollector } from './sandbox-collector.ts';

/** The containers labelled as sandboxes. */
export const sandboxPlugin: CollectorPlugin<SandboxCollector> = {
  domain: sandboxHead,
  create: ({ flags, log, engine }) => new SandboxCollector({ docker: engine, log, label: flags['sandbox-label'] }),
};

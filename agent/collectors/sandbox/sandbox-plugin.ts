import { sandboxDomain } from '../../../shared/domains/sandbox/sandbox-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { agentDockerApi } from '../docker/agent-docker-api.ts';
import { SandboxCollector } from './sandbox-collector.ts';

/** The containers labelled as sandboxes. */
export const sandboxPlugin: CollectorPlugin<SandboxCollector> = {
  domain: sandboxDomain,
  create: ({ options, flags, log, shared }) => new SandboxCollector({ docker: agentDockerApi(options, shared), log, label: flags['sandbox-label'] }),
};

import type { Domain } from '../domain.ts';
import * as sandbox from './sandbox-actions.ts';

/** Containers labelled as sandboxes, seen from the host. */
export const sandboxDomain: Domain = {
  name: 'sandbox',
  actions: [sandbox.snapshot, sandbox.trace, sandbox.events, sandbox.cgroup, sandbox.layerstack],
  reports: {},
};

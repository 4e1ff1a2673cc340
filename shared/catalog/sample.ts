import type { z } from 'zod';
import type { hostSampleShape } from './actions/agent-actions.ts';

/** The small system sample agents send with every heartbeat and the broker keeps per host. */
export type HostSample = z.infer<typeof hostSampleShape>;

import type { z } from 'zod';
import type { hostSampleShape } from '../domains/agent/agent-actions.ts';

/** The small system sample agents send with every heartbeat and the broker keeps per host. */
export type HostSample = z.infer<typeof hostSampleShape>;

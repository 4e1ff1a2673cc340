import type { TrustCheck } from './domain-parts.ts';
import { PART_FOLDERS } from './parts.gen.ts';

/** Every verification a domain's collector setup may skip, in the order of the parts files. */
export const TRUST_CHECKS: readonly TrustCheck[] = PART_FOLDERS.flatMap((parts) => ('trust' in parts ? parts.trust : []));

import { create } from '@bufbuild/protobuf';
import { type TrustUpdate, TrustUpdateSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import type { AgentSession } from '../agents/agent-session.ts';
import type { CaSet } from '../pki/ca-set.ts';

/**
 * What an agent must hear of a CA rotation, if anything: the bundle to trust
 * when it trusts another one, and a renewal now when its certificate is not
 * from the CA that signs while agents move (update-clients, update-servers,
 * and back in rollback).
 */
export function trustUpdateFor(session: Pick<AgentSession, 'trustedCaPins' | 'caPin'>, set: CaSet): TrustUpdate | undefined {
  const wanted = [...set.trustedPins()].sort().join(',');
  const bundleDiffers = [...session.trustedCaPins].sort().join(',') !== wanted;
  const moving = set.phase === 'update-clients' || set.phase === 'update-servers' || set.phase === 'rollback';
  const renewNow = moving && session.caPin !== set.signing().pin;
  if (!bundleDiffers && !renewNow) return undefined;
  return create(TrustUpdateSchema, {
    caBundlePem: set.bundlePem(),
    renewNow,
    reason: `CA rotation: ${set.phase}`,
  });
}

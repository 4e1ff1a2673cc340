import type { ContainerInspectInfo } from 'dockerode';
import type { Replacement } from '../../../shared/domains/rollout/rollout-shapes.ts';
import { SERVICE_LABEL } from './compose-labels.ts';
import { containerName } from './container-name.ts';

/**
 * Takes containers forward one at a time. After the first that is rolled
 * back or fails, the others are left as they are (`skipped`): a new image
 * that fails on one container is not tried on the next.
 */
export async function rollForward(
  containers: readonly ContainerInspectInfo[],
  targetOf: (info: ContainerInspectInfo) => string,
  step: (info: ContainerInspectInfo) => Promise<Replacement>,
): Promise<Replacement[]> {
  const rows: Replacement[] = [];
  let stoppedAt: string | undefined;
  for (const info of containers) {
    if (stoppedAt !== undefined) {
      rows.push({
        container: containerName(info),
        service: info.Config.Labels?.[SERVICE_LABEL] ?? null,
        from_image: info.Config.Image,
        to_image: targetOf(info),
        status: 'skipped',
        health: info.State.Health?.Status ?? null,
        reason: `${stoppedAt} did not come up on the new image, so this one was not touched`,
      });
      continue;
    }
    const row = await step(info);
    rows.push(row);
    if (row.status === 'rolled_back' || row.status === 'failed') stoppedAt = row.container;
  }
  return rows;
}

/** Where a roll-forward ended, taken together: the worst of its containers. */
export function overallStatus(rows: readonly Replacement[]): 'unchanged' | 'updated' | 'rolled_back' | 'failed' {
  if (rows.some((row) => row.status === 'failed')) return 'failed';
  if (rows.some((row) => row.status === 'rolled_back')) return 'rolled_back';
  if (rows.some((row) => row.status === 'updated' || row.status === 'started')) return 'updated';
  return 'unchanged';
}

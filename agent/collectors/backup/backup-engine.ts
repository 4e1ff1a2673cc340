import type { CallContext } from '../../dispatcher/dispatcher.ts';
import type { EngineAccess } from '../../engine/engine-access.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import type { BackupStore } from './backup-store.ts';

/** The slice of the engine client backups call: volumes, images, and containers of their own that mount them. */
export type BackupApi = Pick<
  EngineClient,
  'version' | 'listContainers' | 'listImages' | 'getContainer' | 'createContainer' | 'getVolume' | 'createVolume' | 'listVolumes' | 'getImage'
>;

/** What the backup handlers share: the engine and the archives on disk. */
export interface BackupEngine {
  readonly engine: EngineAccess<BackupApi>;
  readonly store: BackupStore;
  /** The agent's name, on everything a backup makes for a moment. */
  readonly owner: string;
}

/** The work's own deadline (timeout_s) and the call's cancellation, as one signal. */
export function workSignal(context: CallContext, timeoutS: number | undefined, defaultS: number): AbortSignal {
  return AbortSignal.any([context.signal, AbortSignal.timeout((timeoutS ?? defaultS) * 1000)]);
}

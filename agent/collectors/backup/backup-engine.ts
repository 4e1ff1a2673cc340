import type { CallContext } from '../../dispatcher/dispatcher.ts';
import type { EngineAccess } from '../docker/engine-access.ts';
import type { BackupStore } from './backup-store.ts';

/** What the backup handlers share: the engine and the archives on disk. */
export interface BackupEngine {
  readonly engine: EngineAccess;
  readonly store: BackupStore;
  /** The agent's name, on everything a backup makes for a moment. */
  readonly owner: string;
}

/** The work's own deadline (timeout_s) and the call's cancellation, as one signal. */
export function workSignal(context: CallContext, timeoutS: number | undefined, defaultS: number): AbortSignal {
  return AbortSignal.any([context.signal, AbortSignal.timeout((timeoutS ?? defaultS) * 1000)]);
}

import type { watchHistory } from '../../../shared/domains/watch/watch-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { WatchContext } from './watch-status.ts';

/** watch_history: incidents newest first, kept across agent restarts. */
export function registerWatchHistory(dispatcher: Dispatcher, context: WatchContext): void {
  dispatcher.register<typeof watchHistory>('watch.history', async (params) => {
    const incidents = context.store.incidents({ container: params.container, sinceUnixMs: params.since_unix_ms, limit: params.limit ?? 20 });
    return { payload: { incidents, count: incidents.length } };
  });
}

import type { watchCheck } from '../../../shared/domains/watch/watch-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { type WatchContext, watchRow } from './watch-status.ts';

/** watch_check: every target's state now, recording restarts the event stream missed as incidents. */
export function registerWatchCheck(dispatcher: Dispatcher, context: WatchContext): void {
  dispatcher.register<typeof watchCheck>('watch.check', async () => {
    const checkedAt = Date.now();
    const targets = await Promise.all(context.store.list().map((watch) => watchRow(watch, context)));
    const fresh = context.store.incidents({ sinceUnixMs: checkedAt, limit: 200 });
    return { payload: { checked_at_unix_ms: checkedAt, targets, new_incidents: fresh } };
  });
}

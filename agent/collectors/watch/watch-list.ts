import type { watchList } from '../../../shared/domains/watch/watch-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { type WatchContext, watchRow } from './watch-status.ts';

/** watch_list: the watched targets and their state now. */
export function registerWatchList(dispatcher: Dispatcher, context: WatchContext): void {
  dispatcher.register<typeof watchList>('watch.list', async () => {
    const watches = await Promise.all(context.store.list().map((watch) => watchRow(watch, context)));
    return { payload: { watches, count: watches.length } };
  });
}

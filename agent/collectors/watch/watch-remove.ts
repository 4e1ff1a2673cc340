import type { watchRemove } from '../../../shared/domains/watch/watch-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { WatchContext } from './watch-status.ts';

/** watch_remove: stops watching a target; its incidents stay. */
export function registerWatchRemove(dispatcher: Dispatcher, context: WatchContext): void {
  dispatcher.register<typeof watchRemove>('watch.remove', async (params) => {
    const removed = context.store.remove(params.container);
    return { payload: { container: params.container, removed, watching: context.store.list().length } };
  });
}

import type { watchAdd } from '../../../shared/domains/watch/watch-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { WatchContext } from './watch-status.ts';

/** watch_add: starts watching a target; its current run becomes the one a restart is measured against. */
export function registerWatchAdd(dispatcher: Dispatcher, context: WatchContext): void {
  dispatcher.register<typeof watchAdd>('watch.add', async (params) => {
    const runner = params.runner ?? 'docker';
    const existing = context.store.get(params.container);
    const added = !existing || existing.runner !== runner || existing.unit !== params.unit;
    if (added) {
      context.store.put({
        container: params.container,
        runner,
        ...(params.unit ? { unit: params.unit } : {}),
        added_at_unix_ms: existing?.added_at_unix_ms ?? Date.now(),
      });
      if (runner === 'docker') await context.watcher.inTurn(params.container, () => context.watcher.observe(params.container, false)).catch(() => undefined);
    }
    return { payload: { container: params.container, runner, added, watching: context.store.list().length } };
  });
}

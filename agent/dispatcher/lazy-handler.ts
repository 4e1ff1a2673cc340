import type { Action } from '../../shared/catalog/action.ts';
import type { ActionHandler } from './dispatcher.ts';

/**
 * A handler whose module loads when its first call comes, with what it
 * imports (schemas, parsers, other domains' declarations): an idle agent
 * holds none of it. A load that fails is tried again on the next call.
 */
export function lazyHandler<A extends Action>(load: () => Promise<ActionHandler<A>>): ActionHandler<A> {
  let handler: Promise<ActionHandler<A>> | undefined;
  return async (params, context) => {
    handler ??= load().catch((error: unknown) => {
      handler = undefined;
      throw error;
    });
    return (await handler)(params, context);
  };
}

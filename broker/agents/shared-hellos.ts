import type { StoredHello } from '../store/agents-table.ts';

/**
 * Agents of one version on like hosts announce the same actions and the same
 * collectors. Kept as each Hello brought them, a broker held one copy of the
 * same hundred-odd action names per agent: 5.3 KiB of heap for a real agent's
 * Hello, 53 MiB at 10,000 agents (docs/performance.md). A Hello's lists are
 * kept as one frozen copy per distinct list instead, and whether a host offers
 * an action is a set lookup rather than a scan of the list.
 */

/** Distinct lists kept; past this (agents of very many kinds, or a rogue one churning), a Hello keeps its own. */
const MAX_DISTINCT_LISTS = 1024;

const lists = new Map<string, readonly unknown[]>();
const actionSets = new WeakMap<readonly string[], ReadonlySet<string>>();

function shared<T>(list: readonly T[]): T[] {
  const key = JSON.stringify(list);
  const known = lists.get(key);
  if (known) return known as T[];
  if (lists.size >= MAX_DISTINCT_LISTS) return list as T[];
  const frozen = Object.freeze(list.map((item) => (typeof item === 'object' && item !== null ? Object.freeze({ ...item }) : item)));
  lists.set(key, frozen);
  if (frozen.every((item) => typeof item === 'string')) actionSets.set(frozen as readonly string[], new Set(frozen as readonly string[]));
  return frozen as T[];
}

/** The Hello with its actions and collectors as the copies every like agent shares. */
export function sharedHello(hello: StoredHello): StoredHello {
  return { ...hello, actions: shared(hello.actions), collectors: shared(hello.collectors) };
}

/** Whether the agent's Hello offers the action. */
export function offersAction(hello: StoredHello, action: string): boolean {
  return actionSets.get(hello.actions)?.has(action) ?? hello.actions.includes(action);
}

/**
 * A name for a new agent that no enrolled agent holds (compared as the broker
 * compares names, ignoring case): `base` when free, else `base-2`, `base-3`, …
 */
export function freeAgentName(base: string, taken: readonly string[]): string {
  const used = new Set(taken.map((name) => name.toLowerCase()));
  if (!used.has(base.toLowerCase())) return base;
  for (let n = 2; ; n++) if (!used.has(`${base}-${n}`.toLowerCase())) return `${base}-${n}`;
}

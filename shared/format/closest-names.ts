/** Edit distance (insertions, deletions, substitutions, adjacent swaps), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min((d[i - 1]?.[j] ?? 0) + 1, (d[i]?.[j - 1] ?? 0) + 1, (d[i - 1]?.[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, (d[i - 2]?.[j - 2] ?? 0) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return d[s.length]?.[t.length] ?? 0;
}

/** The names most like `wanted`: substring matches first, then by edit distance. */
export function closestNames(wanted: string, names: readonly string[], limit = 3): string[] {
  const lower = wanted.toLowerCase();
  return [...new Set(names)]
    .map((name) => ({ name, score: name.toLowerCase().includes(lower) || lower.includes(name.toLowerCase()) ? 0 : editDistance(wanted, name) }))
    .filter((entry) => entry.score <= Math.max(2, Math.floor(wanted.length / 2)))
    .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name))
    .slice(0, limit)
    .map((entry) => entry.name);
}

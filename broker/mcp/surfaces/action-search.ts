import type { Action } from '../../../shared/catalog/action.ts';
import { editDistance } from '../../../shared/format/closest-names.ts';

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1);
}

interface Indexed {
  action: Action;
  strong: Set<string>;
  weak: Set<string>;
}

/** Close enough to count as the same word despite a typo. */
function near(query: string, word: string): boolean {
  if (query.length < 4 || word.length < 4) return false;
  const allowed = query.length >= 7 ? 2 : 1;
  return Math.abs(query.length - word.length) <= allowed && editDistance(query, word) <= allowed;
}

/**
 * Ranked local search over the catalog for find_action: words in an action's
 * id, tool and title weigh most, its description less; prefixes and small
 * typos still match. Nothing leaves the broker.
 */
export function searchActions(query: string, actions: readonly Action[], limit: number): { action: Action; score: number }[] {
  const index: Indexed[] = actions.map((action) => ({
    action,
    strong: new Set([...words(action.id), ...words(action.tool), ...words(action.title)]),
    weak: new Set(words(action.description)),
  }));
  const terms = words(query);
  if (terms.length === 0) return index.slice(0, limit).map((entry) => ({ action: entry.action, score: 0 }));
  const scored = index.map((entry) => {
    let score = 0;
    for (const term of terms) {
      let best = 0;
      for (const word of entry.strong) {
        if (word === term) best = Math.max(best, 6);
        else if (word.startsWith(term) || term.startsWith(word)) best = Math.max(best, 4);
        else if (near(term, word)) best = Math.max(best, 3);
      }
      for (const word of entry.weak) {
        if (word === term) best = Math.max(best, 1.5);
        else if (word.startsWith(term)) best = Math.max(best, 1);
        else if (near(term, word)) best = Math.max(best, 0.75);
      }
      score += best;
    }
    // Prefer actions matching every word, and reads over changes when otherwise equal.
    const matched = terms.every((term) => [...entry.strong, ...entry.weak].some((w) => w === term || w.startsWith(term) || near(term, w)));
    return { action: entry.action, score: score + (matched ? 2 : 0) + (entry.action.risk === 'read' ? 0.1 : 0) };
  });
  return scored
    .filter((entry) => entry.score > 0.5)
    .sort((a, b) => b.score - a.score || a.action.id.localeCompare(b.action.id))
    .slice(0, limit);
}

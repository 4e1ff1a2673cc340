import type { Replacement } from '../../../shared/domains/rollout/rollout-shapes.ts';

function sentence(row: Replacement): string {
  const health = row.health ? ` (${row.health})` : '';
  switch (row.status) {
    case 'updated':
      return `${row.container} now runs ${row.to_image}${health}${row.reason ? `; ${row.reason}` : ''}.`;
    case 'started':
      return `${row.container} was started on ${row.to_image}${health}.`;
    case 'unchanged':
      return `${row.container} already runs ${row.to_image}.`;
    case 'rolled_back':
      return `${row.container} stays on ${row.from_image}: ${row.reason}.`;
    case 'failed':
      return `${row.container} failed: ${row.reason}.`;
    case 'skipped':
      return `${row.container} stays on ${row.from_image}: ${row.reason}.`;
  }
}

/** The answer in words, container by container, so a reader of the text alone knows where each one ended. */
export function rolloutMessage(rows: readonly Replacement[]): string {
  return rows.map(sentence).join(' ');
}

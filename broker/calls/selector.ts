import { FleetError } from '../../shared/errors/fleet-error.ts';

type Term = { key: string; op: '=' | '!='; value: string } | { key: string; op: 'exists' | 'absent' };

/**
 * Label selectors: `role=db,env!=dev,gpu,!legacy` (k=v, k!=v, k for "has k",
 * !k for "lacks k"; commas mean AND). A key that is absent does not equal
 * anything, so `env!=dev` matches hosts without an env label.
 */
export function parseSelector(text: string): (labels: Record<string, string>) => boolean {
  const terms: Term[] = [];
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const match = /^(!)?([A-Za-z0-9][A-Za-z0-9._/-]*)(?:(!=|=)(.*))?$/.exec(item);
    if (!match || (match[1] && match[3])) {
      throw new FleetError('invalid_argument', `selector: "${item}" is not a label condition`, {
        hint: 'Write conditions as k=v, k!=v, k (has k) or !k (lacks k), separated by commas: role=db,env!=dev.',
      });
    }
    const key = match[2] ?? '';
    if (match[3]) terms.push({ key, op: match[3] as '=' | '!=', value: (match[4] ?? '').trim() });
    else terms.push({ key, op: match[1] ? 'absent' : 'exists' });
  }
  if (terms.length === 0) throw new FleetError('invalid_argument', 'selector is empty', { hint: 'Give at least one condition, such as role=db.' });
  return (labels) =>
    terms.every((term) => {
      const has = Object.hasOwn(labels, term.key);
      switch (term.op) {
        case 'exists':
          return has;
        case 'absent':
          return !has;
        case '=':
          return has && labels[term.key] === term.value;
        case '!=':
          return !has || labels[term.key] !== term.value;
      }
      return false;
    });
}

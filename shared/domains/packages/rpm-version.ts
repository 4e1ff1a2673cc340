/**
 * Compares two RPM versions as rpm does (rpmvercmp over `[epoch:]version[-release]`):
 * the epoch numerically, then the version and the release each split into
 * runs of digits and of letters (other characters only separate them); a
 * digit run is newer than a letter run, digit runs compare as numbers, letter
 * runs as text; `~` sorts before everything, even the end (a pre-release),
 * and `^` after the end but before anything else (a post-release snapshot).
 */
export function compareRpmVersions(a: string, b: string): number {
  const left = parts(a);
  const right = parts(b);
  if (left.epoch !== right.epoch) return left.epoch < right.epoch ? -1 : 1;
  const version = rpmvercmp(left.version, right.version);
  // A release missing on one side does not count (a requirement without one matches any).
  if (version || !left.release || !right.release) return version;
  return rpmvercmp(left.release, right.release);
}

function parts(text: string): { epoch: number; version: string; release: string } {
  const trimmed = text.trim();
  const colon = trimmed.indexOf(':');
  const epoch = colon > 0 ? Number.parseInt(trimmed.slice(0, colon), 10) || 0 : 0;
  const rest = colon > 0 ? trimmed.slice(colon + 1) : trimmed;
  const dash = rest.lastIndexOf('-');
  return dash >= 0 ? { epoch, version: rest.slice(0, dash), release: rest.slice(dash + 1) } : { epoch, version: rest, release: '' };
}

const alnum = /[A-Za-z0-9]/;

function rpmvercmp(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < a.length && !alnum.test(a[i] as string) && a[i] !== '~' && a[i] !== '^') i++;
    while (j < b.length && !alnum.test(b[j] as string) && b[j] !== '~' && b[j] !== '^') j++;
    if (a[i] === '~' || b[j] === '~') {
      if (a[i] !== '~') return 1;
      if (b[j] !== '~') return -1;
      i++;
      j++;
      continue;
    }
    if (a[i] === '^' || b[j] === '^') {
      if (i >= a.length) return -1;
      if (j >= b.length) return 1;
      if (a[i] !== '^') return 1;
      if (b[j] !== '^') return -1;
      i++;
      j++;
      continue;
    }
    if (i >= a.length || j >= b.length) break;
    const numeric = /[0-9]/.test(a[i] as string);
    const run = numeric ? /^[0-9]+/ : /^[A-Za-z]+/;
    const left = run.exec(a.slice(i))?.[0] ?? '';
    const right = run.exec(b.slice(j))?.[0] ?? '';
    // Runs of different kinds: the digits are newer.
    if (!right) return numeric ? 1 : -1;
    i += left.length;
    j += right.length;
    if (numeric) {
      const l = left.replace(/^0+/, '');
      const r = right.replace(/^0+/, '');
      if (l.length !== r.length) return l.length - r.length;
      if (l !== r) return l < r ? -1 : 1;
    } else if (left !== right) {
      return left < right ? -1 : 1;
    }
  }
  // The one with something left is newer.
  if (i >= a.length && j >= b.length) return 0;
  return i >= a.length ? -1 : 1;
}

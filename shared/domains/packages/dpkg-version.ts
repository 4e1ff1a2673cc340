/**
 * Compares two Debian package versions as dpkg does (deb-version(7)):
 * `[epoch:]upstream[-revision]`, the epoch numerically, then the upstream
 * version and the revision each as alternating runs of non-digits (compared
 * character by character, `~` before the end of the run, the end before
 * letters, letters before other characters) and digits (compared as numbers).
 * Negative when `a` is older, zero when equal, positive when newer.
 */
export function compareDpkgVersions(a: string, b: string): number {
  const left = parts(a);
  const right = parts(b);
  if (left.epoch !== right.epoch) return left.epoch < right.epoch ? -1 : 1;
  return orderRuns(left.upstream, right.upstream) || orderRuns(left.revision, right.revision);
}

function parts(version: string): { epoch: number; upstream: string; revision: string } {
  const trimmed = version.trim();
  const colon = trimmed.indexOf(':');
  const epoch = colon > 0 ? Number.parseInt(trimmed.slice(0, colon), 10) || 0 : 0;
  const rest = colon > 0 ? trimmed.slice(colon + 1) : trimmed;
  const dash = rest.lastIndexOf('-');
  return dash >= 0 ? { epoch, upstream: rest.slice(0, dash), revision: rest.slice(dash + 1) } : { epoch, upstream: rest, revision: '' };
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isLetter = (c: string): boolean => /[A-Za-z]/.test(c);

/** The weight of one character of a non-digit run; `undefined` is the run's end. */
function weight(c: string | undefined): number {
  if (c === undefined || isDigit(c)) return 0;
  if (c === '~') return -1;
  if (isLetter(c)) return c.charCodeAt(0);
  return c.charCodeAt(0) + 256;
}

function orderRuns(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    // A run of non-digits, character by character.
    while ((i < a.length && !isDigit(a[i])) || (j < b.length && !isDigit(b[j]))) {
      const wa = weight(a[i]);
      const wb = weight(b[j]);
      if (wa !== wb) return wa - wb;
      i++;
      j++;
    }
    // A run of digits, as a number: leading zeros do not count.
    while (a[i] === '0') i++;
    while (b[j] === '0') j++;
    let first = 0;
    while (isDigit(a[i]) && isDigit(b[j])) {
      if (!first) first = (a.charCodeAt(i) as number) - (b.charCodeAt(j) as number);
      i++;
      j++;
    }
    if (isDigit(a[i])) return 1;
    if (isDigit(b[j])) return -1;
    if (first) return first;
  }
  return 0;
}

/**
 * Compares two Alpine package versions as apk does (`1.2.3a_rc1_p2-r4`): the
 * dotted numbers as numbers (more of them is newer), then the one letter (none
 * before any), then the suffixes in turn, where `_alpha`, `_beta`, `_pre` and
 * `_rc` come before no suffix and `_cvs`, `_svn`, `_git`, `_hg` and `_p` after
 * it, each by its number, and last the package revision `-rN`.
 */
export function compareApkVersions(a: string, b: string): number {
  const left = parts(a);
  const right = parts(b);
  for (let k = 0; k < Math.max(left.numbers.length, right.numbers.length); k++) {
    const l = left.numbers[k];
    const r = right.numbers[k];
    if (l === undefined || r === undefined) return l === undefined ? -1 : 1;
    if (l !== r) return l < r ? -1 : 1;
  }
  if (left.letter !== right.letter) return left.letter < right.letter ? -1 : 1;
  for (let k = 0; k < Math.max(left.suffixes.length, right.suffixes.length); k++) {
    const l = left.suffixes[k] ?? NO_SUFFIX;
    const r = right.suffixes[k] ?? NO_SUFFIX;
    if (l.rank !== r.rank) return l.rank - r.rank;
    if (l.number !== r.number) return l.number < r.number ? -1 : 1;
  }
  return left.revision === right.revision ? 0 : left.revision < right.revision ? -1 : 1;
}

/** Suffix ranks around "no suffix" (0): pre-releases below, snapshots and patches above. */
const SUFFIX_RANK: Record<string, number> = { alpha: -4, beta: -3, pre: -2, rc: -1, cvs: 1, svn: 2, git: 3, hg: 4, p: 5 };
const NO_SUFFIX = { rank: 0, number: 0 };

function parts(version: string): { numbers: number[]; letter: string; suffixes: { rank: number; number: number }[]; revision: number } {
  let rest = version.trim();
  let revision = 0;
  const r = /-r(\d+)$/.exec(rest);
  if (r) {
    revision = Number(r[1]);
    rest = rest.slice(0, r.index);
  }
  const [head = '', ...suffixTexts] = rest.split('_');
  const numbers = (/^[0-9.]+/.exec(head)?.[0] ?? '').split('.').filter(Boolean).map(Number);
  const letter = /[a-z]$/.exec(head)?.[0] ?? '';
  const suffixes = suffixTexts.map((text) => {
    const match = /^([a-z]+)(\d*)$/.exec(text);
    return { rank: SUFFIX_RANK[match?.[1] ?? ''] ?? 0, number: Number(match?.[2] || 0) };
  });
  return { numbers, letter, suffixes, revision };
}

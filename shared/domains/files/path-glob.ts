import { FleetError } from '../../errors/fleet-error.ts';

/** One segment of a glob: `**` (any number of segments), or a pattern within one segment. */
type Segment = { kind: 'any-depth' } | { kind: 'name'; pattern: RegExp; dotted: boolean };

/** Characters a glob may not hold: classes and braces would read as one thing to one person and another to the next. */
const REFUSED = /[[\]{}\\\0]/;

function refused(glob: string, why: string): FleetError {
  return new FleetError('invalid_argument', `--file-paths "${glob}": ${why}`, {
    hint: "Give absolute globs such as '/etc/nginx/**' or '/var/www/*.conf', one --file-paths each (* within a name, ? one character, ** any depth).",
  });
}

function segmentOf(glob: string, text: string): Segment {
  if (text === '**') return { kind: 'any-depth' };
  if (text.includes('**')) throw refused(glob, '** must be a whole segment (/**/), not part of a name');
  const source = [...text].map((c) => (c === '*' ? '[^/]*' : c === '?' ? '[^/]' : c.replace(/[.+^$()|]/g, '\\$&'))).join('');
  return { kind: 'name', pattern: new RegExp(`^${source}$`, 'su'), dotted: text.startsWith('.') };
}

/**
 * An operator's path glob (--file-paths), matched segment by segment against
 * a normalised absolute path (no `.`, `..` or empty segments). `*` is any run
 * of characters within a name, `?` one character, and a segment `**` any
 * number of segments, none included: `/etc/nginx/**` matches `/etc/nginx`
 * itself, so file_stat lists it. As in a shell, a name starting with `.` is
 * matched only by a segment that starts with `.`: `/etc/app/**` does not reach
 * `/etc/app/.htpasswd` unless the operator names it. Character classes and
 * braces are refused when the glob is read rather than read literally.
 */
export class PathGlob {
  private readonly segments: readonly Segment[];
  /** The directory its fixed leading names make (`/etc/nginx` of `/etc/nginx/**`, `/` of `/**`). */
  readonly base: string;

  constructor(readonly text: string) {
    if (!text.startsWith('/')) throw refused(text, 'a glob must be an absolute path');
    if (REFUSED.test(text)) throw refused(text, 'character classes ([…]), braces ({…}) and backslashes are not supported');
    const names = text === '/' ? [] : text.slice(1).split('/');
    if (names.some((name) => name === '' || name === '.' || name === '..')) throw refused(text, 'a glob has no empty, . or .. segments');
    this.segments = names.map((name) => segmentOf(text, name));
    const firstWild = names.findIndex((name) => /[*?]/.test(name));
    this.base = `/${(firstWild === -1 ? names : names.slice(0, firstWild)).join('/')}`;
  }

  /** Whether a normalised absolute path matches. */
  matches(path: string): boolean {
    const names = path === '/' ? [] : path.slice(1).split('/');
    // Which glob segments can stand at which path names, walked once: paths are short, and ** never backtracks exponentially.
    let states = new Set([0]);
    const close = (set: Set<number>) => {
      for (const at of set) if (this.segments[at]?.kind === 'any-depth') set.add(at + 1);
      return set;
    };
    close(states);
    for (const name of names) {
      const next = new Set<number>();
      for (const at of states) {
        const segment = this.segments[at];
        if (!segment) continue;
        if (segment.kind === 'any-depth') {
          if (!name.startsWith('.')) next.add(at);
        } else if (segment.pattern.test(name) && (segment.dotted || !name.startsWith('.'))) next.add(at + 1);
      }
      states = close(next);
      if (states.size === 0) return false;
    }
    return states.has(this.segments.length);
  }

  /** The same glob with its fixed leading directory replaced (by where that directory's symlinks lead). */
  rebased(base: string): PathGlob {
    const rest = this.text.slice(this.base.length).replace(/^\//, '');
    return new PathGlob(rest ? `${base === '/' ? '' : base}/${rest}` : base);
  }
}

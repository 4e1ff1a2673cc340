/**
 * A matcher for absolute paths against globs: `*` and `?` stay within one
 * folder, `**` crosses folders, everything else is literal. A path matches
 * when any glob matches it whole.
 */
export function pathGlobs(globs: readonly string[]): (path: string) => boolean {
  const patterns = globs.map((glob) => {
    let source = '';
    for (let i = 0; i < glob.length; i++) {
      const c = glob[i] as string;
      if (c === '*' && glob[i + 1] === '*') {
        source += '.*';
        i++;
      } else if (c === '*') source += '[^/]*';
      else if (c === '?') source += '[^/]';
      else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    return new RegExp(`^${source}$`);
  });
  return (path) => patterns.some((pattern) => pattern.test(path));
}

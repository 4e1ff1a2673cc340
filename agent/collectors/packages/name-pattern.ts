/** A package name filter: exact, or with `*` standing for any run of characters. */
export function namePattern(pattern: string | undefined): (name: string) => boolean {
  if (pattern === undefined) return () => true;
  if (!pattern.includes('*')) return (name) => name === pattern;
  const regex = new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return (name) => regex.test(name);
}

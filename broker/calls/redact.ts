/** Keys whose values are secrets wherever they appear. */
const SECRET_KEY = /(secret|password|passwd|token|api[_-]?key|private[_-]?key|credential|authorization)/i;

/** Arguments as the audit log keeps them: secrets replaced, everything else as given. */
export function redactArguments(args: Record<string, unknown>, sensitive: readonly string[] = []): Record<string, unknown> {
  const walk = (value: unknown, key: string | undefined, depth: number): unknown => {
    if (key !== undefined && (sensitive.includes(key) || SECRET_KEY.test(key))) return '[redacted]';
    if (depth > 6) return '[…]';
    if (Array.isArray(value)) return value.map((item) => walk(item, undefined, depth + 1));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, walk(v, k, depth + 1)]));
    }
    return value;
  };
  return walk(args, undefined, 0) as Record<string, unknown>;
}

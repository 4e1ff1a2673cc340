import { accessSync, constants, statSync } from 'node:fs';
import { z } from 'zod';
import { toFleetError } from '../errors/fleet-error.ts';
import { closestNames } from '../format/closest-names.ts';
import { yamlLibrary } from '../yaml/yaml-library.ts';
import { convertFlagValue, type FlagSpecs } from './command-line.ts';

/** What is wrong with a config key: a vocabulary, to branch on. */
const CONFIG_ISSUE_CODES = [
  'yaml_syntax',
  'not_a_mapping',
  'unknown_key',
  'wrong_type',
  'duplicate_key',
  'conflicting_keys',
  'unreadable_file',
  'loose_file_mode',
] as const;

export const configIssueShape = z.object({
  code: z.enum(CONFIG_ISSUE_CODES),
  severity: z.enum(['error', 'warning']),
  key: z.string().nullable(),
  line: z.number().nullable().describe('1-based line in the file; null when the issue is about the whole file.'),
  message: z.string(),
});

export type ConfigIssue = z.infer<typeof configIssueShape>;

interface ConfigCheckOptions {
  flags: FlagSpecs;
  /** Runs the program's own start checks on the file (keys that exclude each other, files it reads); throws what the program would stop on. */
  resolve?(): void;
}

/**
 * Checks a `--config` file's text the way the program reads it at start, but
 * reports every problem with its line instead of stopping at the first:
 * unknown keys, values of the wrong type, a key given in two spellings,
 * unreadable or loosely readable secret files, and what the program's own
 * checks refuse.
 */
export function checkConfigText(text: string, options: ConfigCheckOptions): ConfigIssue[] {
  const { isMap, isScalar, LineCounter, parseDocument } = yamlLibrary();
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: false });
  const issues: ConfigIssue[] = [];
  const lineOf = (offset: number | undefined) => (offset === undefined ? null : lineCounter.linePos(offset).line);
  for (const error of document.errors) {
    issues.push({ code: 'yaml_syntax', severity: 'error', key: null, line: lineOf(error.pos[0]), message: error.message.split('\n')[0] ?? 'invalid YAML' });
  }
  if (issues.length) return issues;
  const root = document.contents;
  if (root === null || (isScalar(root) && (root.value === null || root.value === ''))) return issues;
  if (!isMap(root)) {
    return [
      { code: 'not_a_mapping', severity: 'error', key: null, line: lineOf(root.range?.[0]), message: 'the file must be a mapping of option names to values' },
    ];
  }
  const values: Record<string, unknown> = {};
  const lines = new Map<string, number | null>();
  for (const pair of root.items) {
    const keyNode = pair.key;
    const key = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
    const line = lineOf(isScalar(keyNode) ? keyNode.range?.[0] : undefined);
    const flag = key.replaceAll('_', '-');
    const spec = options.flags[flag];
    if (!spec || spec.hidden) {
      const [closest] = closestNames(
        flag,
        Object.keys(options.flags).filter((name) => !options.flags[name]?.hidden),
        1,
      );
      const guess = closest === undefined ? '' : ` (did you mean ${closest}?)`;
      issues.push({ code: 'unknown_key', severity: 'error', key, line, message: `"${key}" is not an option of this program${guess}` });
      continue;
    }
    if (lines.has(flag)) {
      const first = lines.get(flag);
      issues.push({
        code: 'duplicate_key',
        severity: 'warning',
        key,
        line,
        message: `"${key}" sets ${flag} again (first set on line ${first ?? '?'}); the last one wins`,
      });
    }
    lines.set(flag, line);
    const raw = (pair.value as { toJSON?: () => unknown } | null)?.toJSON?.() ?? (isScalar(pair.value) ? pair.value.value : pair.value);
    try {
      values[flag] = convertFlagValue(flag, spec, raw, key);
    } catch (error) {
      issues.push({ code: 'wrong_type', severity: 'error', key, line, message: toFleetError(error).message });
      continue;
    }
    if (flag.endsWith('-file') && typeof values[flag] === 'string') issues.push(...fileIssues(values[flag] as string, key, line));
  }
  if (options.resolve && !issues.some((issue) => issue.severity === 'error')) {
    try {
      options.resolve();
    } catch (error) {
      const message = toFleetError(error).message;
      // The program names the flags at fault as --flag: point at the first of them in the file.
      const named = [...message.matchAll(/--([a-z0-9-]+)/g)].map((match) => match[1] as string).find((flag) => lines.has(flag));
      issues.push({
        code: 'conflicting_keys',
        severity: 'error',
        key: named ?? null,
        line: named ? (lines.get(named) ?? null) : null,
        message,
      });
    }
  }
  return issues;
}

/** A secret file must be readable, and should not be readable by everyone. */
function fileIssues(path: string, key: string, line: number | null): ConfigIssue[] {
  try {
    accessSync(path, constants.R_OK);
    const stats = statSync(path);
    if (!stats.isFile()) return [{ code: 'unreadable_file', severity: 'error', key, line, message: `${path} is not a file` }];
    if (stats.mode & 0o004) {
      return [
        { code: 'loose_file_mode', severity: 'warning', key, line, message: `${path} is readable by every user (mode ${(stats.mode & 0o777).toString(8)})` },
      ];
    }
    return [];
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not readable by the agent' : `cannot be read (${code ?? 'error'})`;
    return [{ code: 'unreadable_file', severity: 'error', key, line, message: `${path} ${reason}` }];
  }
}

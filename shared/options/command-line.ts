import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FleetError } from '../errors/fleet-error.ts';
import { closestNames } from '../format/closest-names.ts';
import { yamlLibrary } from '../yaml/yaml-library.ts';
import { parseDurationMs, parseLabels } from './values.ts';

/**
 * Flags for every fleetmesh command, read from the command line, then the
 * environment, then a YAML config file, then defaults: one declaration per flag
 * gives its type, its environment variable, its help line and its default.
 * Anything wrong stops the program with one line naming the flag, variable or
 * key at fault, before anything starts.
 */

type FlagType = 'string' | 'boolean' | 'integer' | 'duration' | 'labels' | 'list';

type FlagValue<T extends FlagType> = T extends 'string'
  ? string
  : T extends 'boolean'
    ? boolean
    : T extends 'integer' | 'duration'
      ? number
      : T extends 'labels'
        ? Record<string, string>
        : string[];

export interface FlagSpec<T extends FlagType = FlagType> {
  readonly type: T;
  readonly description: string;
  /** The value when nothing sets it; for durations a text such as `5s`. */
  readonly default?: FlagValue<T> | string;
  /** The environment variable; `false` for none. Default: FLEETMESH_<NAME>. */
  readonly env?: string | false;
  /** The word shown after the flag in help, such as HOST:PORT. */
  readonly placeholder?: string;
  readonly min?: number;
  readonly max?: number;
  /** For strings: the only values accepted. */
  readonly choices?: readonly string[];
  /** For lists: the flag may be given several times. */
  readonly repeatable?: boolean;
  readonly short?: string;
  /** Not listed in help (test hooks). */
  readonly hidden?: boolean;
}

export type FlagSpecs = Record<string, FlagSpec>;

export type FlagValues<S extends FlagSpecs> = {
  [K in keyof S]: S[K] extends FlagSpec<infer T> ? (S[K] extends { default: unknown } ? FlagValue<T> : FlagValue<T> | undefined) : never;
};

export interface CommandSpec<S extends FlagSpecs = FlagSpecs> {
  /** Full command words, such as `token create`. */
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  readonly flags: S;
  /** Longer text printed under the usage line in help. */
  readonly details?: string;
  readonly positionals?: { name: string; description: string; required: boolean }[];
  /** Whether this command reads `--config`. */
  readonly configFile?: boolean;
  /** Whether options that are none of its flags are kept in `extra` for the command to judge, instead of refused here. */
  readonly extraOptions?: boolean;
}

export interface ParsedCommand<S extends FlagSpecs> {
  values: FlagValues<S>;
  positionals: string[];
  help: boolean;
  /** The config file read, when there was one (config_validate checks it again later). */
  configPath?: string;
  /** With `extraOptions`: the options that are none of its flags, in order, as name (without dashes) and value ('true' when none followed). */
  extra?: [string, string][];
}

/** Takes out of argv the options that are none of `known`, each with its value: `--name=value`, `--name value`, or `--name` alone. */
function takeExtraOptions(argv: string[], known: Set<string>): { rest: string[]; extra: [string, string][] } {
  const rest: string[] = [];
  const extra: [string, string][] = [];
  for (let at = 0; at < argv.length; at++) {
    const token = argv[at] as string;
    if (token === '--') {
      rest.push(...argv.slice(at));
      break;
    }
    const match = /^--([^=]+)(?:=(.*))?$/s.exec(token);
    const name = match?.[1];
    if (!match || name === undefined || known.has(name) || (name.startsWith('no-') && known.has(name.slice(3)))) {
      rest.push(token);
      continue;
    }
    const next = argv[at + 1];
    if (match[2] !== undefined) extra.push([name, match[2]]);
    else if (next !== undefined && !next.startsWith('--')) {
      extra.push([name, next]);
      at++;
    } else extra.push([name, 'true']);
  }
  return { rest, extra };
}

export function envName(flag: string, spec: FlagSpec): string | undefined {
  if (spec.env === false) return undefined;
  return spec.env ?? `FLEETMESH_${flag.replaceAll('-', '_').toUpperCase()}`;
}

/** A flag's value from the command line, a variable or a config key, converted to its type; `source` names where it came from in errors. */
export function convertFlagValue(flag: string, spec: FlagSpec, raw: unknown, source: string): unknown {
  const where = `${source}`;
  switch (spec.type) {
    case 'string': {
      if (typeof raw !== 'string' && typeof raw !== 'number') {
        throw new FleetError('invalid_argument', `${where} must be a string`);
      }
      const text = String(raw);
      if (spec.choices && !spec.choices.includes(text)) {
        throw new FleetError('invalid_argument', `${where} must be one of ${spec.choices.join(', ')}, not "${text}"`);
      }
      return text;
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      const text = String(raw).toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(text)) return true;
      if (['0', 'false', 'no', 'off', ''].includes(text)) return false;
      throw new FleetError('invalid_argument', `${where} must be true or false, not "${String(raw)}"`);
    }
    case 'integer': {
      const value = typeof raw === 'number' ? raw : Number(String(raw).trim());
      if (!Number.isInteger(value) || String(raw).trim() === '') {
        throw new FleetError('invalid_argument', `${where} must be a whole number, not "${String(raw)}"`);
      }
      if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) {
        throw new FleetError('invalid_argument', `${where} must be between ${spec.min ?? '-∞'} and ${spec.max ?? '∞'}, not ${value}`);
      }
      return value;
    }
    case 'duration': {
      if (typeof raw === 'number') return raw;
      const value = parseDurationMs(String(raw), where);
      if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) {
        throw new FleetError('invalid_argument', `${where} is out of range`);
      }
      return value;
    }
    case 'labels': {
      if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
        return parseLabels(
          Object.entries(raw as Record<string, unknown>)
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(','),
          where,
        );
      }
      return parseLabels(String(raw), where);
    }
    case 'list': {
      const items = Array.isArray(raw) ? raw.map(String) : String(raw).split(',');
      return items.map((item) => item.trim()).filter((item) => item !== '');
    }
  }
  throw new FleetError('internal', `flag --${flag} has an unknown type`);
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(error as Error).message})`;
    throw new FleetError('invalid_argument', `config file ${path} ${reason}`);
  }
  let parsed: unknown;
  try {
    parsed = yamlLibrary().parse(text);
  } catch (error) {
    throw new FleetError('invalid_argument', `config file ${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new FleetError('invalid_argument', `config file ${path} must be a mapping of option names to values`);
  }
  return parsed as Record<string, unknown>;
}

/** Parses argv (the words after the command) against a command's flags. */
export function parseCommandLine<S extends FlagSpecs>(command: CommandSpec<S>, argv: string[], env: NodeJS.ProcessEnv): ParsedCommand<S> {
  const parseOptions: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  if (command.configFile) parseOptions.config = { type: 'string' };
  for (const [flag, spec] of Object.entries(command.flags)) {
    parseOptions[flag] = {
      type: spec.type === 'boolean' ? 'boolean' : 'string',
      ...(spec.repeatable ? { multiple: true } : {}),
      ...(spec.short ? { short: spec.short } : {}),
    };
  }
  const { rest, extra } = command.extraOptions ? takeExtraOptions(argv, new Set(Object.keys(parseOptions))) : { rest: argv, extra: undefined };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: parseOptions, allowPositionals: true, strict: true });
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    throw new FleetError('invalid_argument', `${message.charAt(0).toLowerCase()}${message.slice(1)}`, {
      hint: `Run fleetmesh ${command.name} --help for its flags.`,
    });
  }
  const cli = parsed.values as Record<string, unknown>;
  if (cli.help === true) return { values: {} as FlagValues<S>, positionals: parsed.positionals, help: true };

  const configPath = command.configFile ? ((cli.config as string | undefined) ?? env.FLEETMESH_CONFIG) : undefined;
  const config = configPath ? readConfigFile(configPath) : {};
  const configByFlag = new Map<string, unknown>();
  for (const [key, value] of Object.entries(config)) {
    const flag = key.replaceAll('_', '-');
    const spec = command.flags[flag];
    if (!spec || spec.hidden) {
      const known = Object.entries(command.flags)
        .filter(([, s]) => !s.hidden)
        .map(([name]) => name)
        .join(', ');
      throw new FleetError('invalid_argument', `config file ${configPath}: unknown key "${key}" for fleetmesh ${command.name}`, {
        hint: `Known keys: ${known}.`,
      });
    }
    configByFlag.set(flag, value);
  }

  const values: Record<string, unknown> = {};
  for (const [flag, spec] of Object.entries(command.flags)) {
    const variable = envName(flag, spec);
    const fromCli = cli[flag];
    let value: unknown;
    if (fromCli !== undefined) {
      const raw = Array.isArray(fromCli) ? fromCli.join(',') : fromCli;
      value = convertFlagValue(flag, spec, raw, `--${flag}`);
      if (spec.repeatable && Array.isArray(fromCli)) value = fromCli.map(String);
    } else if (variable !== undefined && env[variable] !== undefined && env[variable] !== '') {
      value = convertFlagValue(flag, spec, env[variable], `${variable}`);
    } else if (configByFlag.has(flag)) {
      value = convertFlagValue(flag, spec, configByFlag.get(flag), `${flag} in ${configPath}`);
    } else if (spec.default !== undefined) {
      value = typeof spec.default === 'string' && spec.type !== 'string' ? convertFlagValue(flag, spec, spec.default, `default of --${flag}`) : spec.default;
    }
    values[flag] = value;
  }
  const required = (command.positionals ?? []).filter((p) => p.required).length;
  const allowed = (command.positionals ?? []).length;
  if (parsed.positionals.length < required) {
    const missing = (command.positionals ?? [])[parsed.positionals.length];
    throw new FleetError('invalid_argument', `missing ${missing?.name ?? 'argument'}`, {
      hint: `Usage: ${command.usage}`,
    });
  }
  if (parsed.positionals.length > allowed) {
    throw new FleetError('invalid_argument', `unexpected argument "${parsed.positionals[allowed]}"`, {
      hint: `Usage: ${command.usage}`,
    });
  }
  return { values: values as FlagValues<S>, positionals: parsed.positionals, help: false, ...(configPath ? { configPath } : {}), ...(extra ? { extra } : {}) };
}

/** The --help text of a command. */
export function formatHelp(command: CommandSpec): string {
  const lines = [`Usage: ${command.usage}`, '', command.summary];
  if (command.details) lines.push('', command.details);
  if (command.positionals?.length) {
    lines.push('', 'Arguments:');
    for (const p of command.positionals) lines.push(`  ${p.name.padEnd(12)}  ${p.description}`);
  }
  lines.push('', 'Flags:');
  const rows: [string, string][] = [];
  for (const [flag, spec] of Object.entries(command.flags)) {
    if (spec.hidden) continue;
    const placeholder = spec.type === 'boolean' ? '' : ` ${spec.placeholder ?? spec.type.toUpperCase()}`;
    const extras: string[] = [];
    const empty =
      spec.default === undefined ||
      spec.default === '' ||
      spec.default === false ||
      (typeof spec.default === 'object' && Object.keys(spec.default).length === 0);
    if (!empty) {
      extras.push(`default ${typeof spec.default === 'object' ? JSON.stringify(spec.default) : String(spec.default)}`);
    }
    const variable = envName(flag, spec);
    if (variable) extras.push(`env ${variable}`);
    rows.push([`--${flag}${placeholder}`, `${spec.description}${extras.length ? ` (${extras.join('; ')})` : ''}`]);
  }
  if (command.configFile) rows.push(['--config FILE', 'YAML file whose keys are these flag names (env FLEETMESH_CONFIG)']);
  rows.push(['-h, --help', 'show this help']);
  const width = Math.max(...rows.map(([left]) => left.length));
  for (const [left, right] of rows) lines.push(`  ${left.padEnd(width)}  ${right}`);
  return lines.join('\n');
}

/**
 * FLEETMESH_* variables of ours that a command may meet without reading them:
 * those of the MCP client commands (call, stdio), which a shell keeps for the
 * other commands too, and those docker-compose.yml interpolates on the host.
 */
export const VARIABLES_READ_ELSEWHERE: readonly string[] = [
  'FLEETMESH_MCP_URL',
  'FLEETMESH_MCP_TOKEN',
  'FLEETMESH_SECRETS',
  'FLEETMESH_UID',
  'FLEETMESH_GID',
  'FLEETMESH_DOCKER_GID',
  'FLEETMESH_BROKER_HOST',
  'FLEETMESH_MCP_PORT',
  'FLEETMESH_GRPC_PORT',
  'FLEETMESH_IMAGE',
  'FLEETMESH_AGENT_LABELS',
  'FLEETMESH_BROKER_PLACEMENT',
];

/**
 * One warning line naming the FLEETMESH_* variables this command does not read
 * (a misspelt or misplaced setting would otherwise be ignored silently), each
 * with the closest one it does read; undefined when there are none.
 */
export function unknownVariablesWarning(command: CommandSpec, env: NodeJS.ProcessEnv): string | undefined {
  const known = Object.entries(command.flags)
    .map(([flag, spec]) => envName(flag, spec))
    .filter((name): name is string => name !== undefined);
  if (command.configFile) known.push('FLEETMESH_CONFIG');
  const unknown = Object.keys(env)
    .filter((name) => name.startsWith('FLEETMESH_') && !known.includes(name) && !VARIABLES_READ_ELSEWHERE.includes(name))
    .sort();
  if (unknown.length === 0) return undefined;
  const suffixes = known.map((name) => name.slice('FLEETMESH_'.length));
  const named = unknown.map((name) => {
    const [closest] = closestNames(name.slice('FLEETMESH_'.length), suffixes, 1);
    return closest === undefined ? name : `${name} (did you mean FLEETMESH_${closest}?)`;
  });
  const verb = unknown.length === 1 ? 'is not a setting of this command, ignored' : 'are not settings of this command, ignored';
  return `warning: ${named.join(', ')} ${verb} (--help lists the variables it reads)`;
}

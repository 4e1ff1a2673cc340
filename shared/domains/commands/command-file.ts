import { accessSync, constants, statSync } from 'node:fs';
import { posix } from 'node:path';
import type { z } from 'zod';
import { FleetError } from '../../errors/fleet-error.ts';
import type { SystemAccounts, SystemUser } from '../../options/system-accounts.ts';
import { zodLibrary } from '../../options/zod-library.ts';
import { yamlLibrary } from '../../yaml/yaml-library.ts';
import { type ArgvPart, COMMAND_PATH, type CommandDefinition, type CommandParam } from './command-definition.ts';
import { paramArgument } from './param-argument.ts';

const NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const PARAM_NAME = /^[a-z][a-z0-9_]{0,31}$/;
/** `{name}` anywhere in an argv element: a whole element is a parameter, a part of one is refused. */
const PARAM_REFERENCE = /\{([a-z][a-z0-9_]{0,31})\}/;

/** The file's shape, made at the first file read (the schema library is not loaded by agents without one). */
function fileSchemas() {
  const { z: zod } = zodLibrary();
  const scalar = zod.union([zod.string(), zod.number()]);

  const paramSchema = zod
    .object({
      type: zod.enum(['enum', 'integer', 'string']),
      description: zod.string().max(200).optional(),
      values: zod.array(scalar).min(1).max(200).optional(),
      min: zod.number().int().optional(),
      max: zod.number().int().optional(),
      pattern: zod.string().min(1).max(500).optional(),
      max_length: zod.number().int().min(1).max(4096).optional(),
      allow_dash: zod.boolean().optional(),
      default: scalar.optional(),
    })
    .strict();

  const entrySchema = zod
    .object({
      name: zod.string().regex(NAME, 'a name is lower-case letters, digits, _ and -, starting with a letter'),
      description: zod.string().max(300).optional(),
      argv: zod.array(scalar).min(1).max(64),
      params: zod.record(zod.string().regex(PARAM_NAME, 'a parameter name is lower-case letters, digits and _'), paramSchema).optional(),
      timeout_s: zod.number().int().min(1).max(60).optional(),
      output_kib: zod.number().int().min(1).max(1024).optional(),
      run_as: zod.union([zod.string().min(1), zod.number().int().min(0)]).optional(),
      level: zod.number().int().min(1, 'a command is level 1 to 3: every run is audited, none is a level-0 read').max(3).optional(),
      destructive: zod.boolean().optional(),
    })
    .strict();

  const fileSchema = zod.array(entrySchema).max(200);
  return { paramSchema, entrySchema, fileSchema };
}

type FileSchemas = ReturnType<typeof fileSchemas>;
let schemas: FileSchemas | undefined;

type Entry = z.infer<FileSchemas['entrySchema']>;

/** What the file is read against: the machine's users, the agent's own uid, and whether a program exists and runs. */
export interface CommandFileContext {
  accounts: SystemAccounts;
  agentUid: number;
  isProgram(path: string): boolean;
}

/** Whether a path is a file this process could run. */
export function isProgram(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Reads the operator's commands file (a YAML list), checking everything that
 * can be checked before a call: the keys, each parameter's declaration (an
 * enum's values, an integer's bounds, a string's pattern, which must compile,
 * a default that passes its own checks), that argv's first element is a
 * program (a bare name is looked up on COMMAND_PATH once, here), that every
 * `{param}` is a whole element naming a declared parameter and every
 * parameter is used, and that `run_as` names a user this agent can become.
 * The first problem throws an `invalid_argument` naming the file, the command
 * and the key.
 */
export function parseCommandFile(text: string, file: string, context: CommandFileContext): CommandDefinition[] {
  const fail = (where: string, why: string) =>
    new FleetError('invalid_argument', `--commands ${file}: ${where}${why}`, {
      hint: 'The file is a YAML list of commands: name, argv (a list; "{param}" alone as an element is a parameter), params, timeout_s, output_kib, run_as, level (1-3), destructive.',
    });
  let raw: unknown;
  try {
    raw = yamlLibrary().parse(text);
  } catch (error) {
    throw fail('', `not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  schemas ??= fileSchemas();
  const parsed = schemas.fileSchema.safeParse(raw ?? []);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const [index, ...rest] = issue?.path ?? [];
    const entry = typeof index === 'number' && Array.isArray(raw) ? (raw[index] as { name?: unknown } | undefined) : undefined;
    const where = typeof index === 'number' ? `command ${typeof entry?.name === 'string' ? entry.name : `#${index + 1}`}: ` : '';
    throw fail(where, `${rest.length ? `${rest.join('.')}: ` : ''}${issue?.message ?? 'invalid'}`);
  }
  const seen = new Set<string>();
  return parsed.data.map((entry) => {
    const where = `command ${entry.name}: `;
    if (seen.has(entry.name)) throw fail(where, 'declared twice');
    seen.add(entry.name);
    return definition(entry, context, (why) => fail(where, why));
  });
}

function definition(entry: Entry, context: CommandFileContext, fail: (why: string) => FleetError): CommandDefinition {
  const params = Object.entries(entry.params ?? {}).map(([name, spec]) => param(entry.name, name, spec, (why) => fail(`params.${name}: ${why}`)));
  const [first, ...rest] = entry.argv.map(String);
  if (first === undefined || PARAM_REFERENCE.test(first)) throw fail('argv[0] must be the program itself, never a parameter');
  const program = first.includes('/')
    ? first
    : COMMAND_PATH.split(':')
        .map((dir) => posix.join(dir, first))
        .find((path) => context.isProgram(path));
  if (program === undefined) throw fail(`argv[0] "${first}" is on no directory of ${COMMAND_PATH}`);
  if (!posix.isAbsolute(program)) throw fail(`argv[0] "${first}" must be an absolute path or a bare program name`);
  if (!context.isProgram(program)) throw fail(`argv[0] ${program} is not a program this agent can run`);
  const used = new Set<string>();
  const argv = rest.map((element, index): ArgvPart => {
    const reference = PARAM_REFERENCE.exec(element);
    if (!reference) return { literal: element };
    const name = reference[1] as string;
    if (element !== `{${name}}`) throw fail(`argv[${index + 1}] "${element}" joins {${name}} with other text: a parameter must be a whole argument`);
    if (!params.some((p) => p.name === name)) throw fail(`argv[${index + 1}] uses {${name}}, which params does not declare`);
    used.add(name);
    return { param: name };
  });
  const unused = params.filter((p) => !used.has(p.name)).map((p) => p.name);
  if (unused.length) throw fail(`params ${unused.join(', ')} appear nowhere in argv`);
  return {
    name: entry.name,
    description: entry.description ?? '',
    program,
    argv,
    params,
    timeoutS: entry.timeout_s ?? 30,
    outputKib: entry.output_kib ?? 64,
    runAs: entry.run_as === undefined ? undefined : runAs(entry.run_as, context, fail),
    level: (entry.level ?? 1) as 1 | 2 | 3,
    destructive: entry.destructive ?? false,
  };
}

function param(command: string, name: string, spec: z.infer<FileSchemas['paramSchema']>, fail: (why: string) => FleetError): CommandParam {
  const misplaced = (keys: (keyof typeof spec)[]) => {
    const found = keys.filter((key) => spec[key] !== undefined);
    if (found.length) throw fail(`${found.join(', ')} is not for a parameter of type ${spec.type}`);
  };
  let matcher: RegExp | undefined;
  if (spec.type === 'enum') {
    misplaced(['min', 'max', 'pattern', 'max_length']);
    if (!spec.values) throw fail('an enum lists its values');
  } else if (spec.type === 'integer') {
    misplaced(['values', 'pattern', 'max_length']);
    if (spec.min !== undefined && spec.max !== undefined && spec.min > spec.max) throw fail(`min ${spec.min} is above max ${spec.max}`);
  } else {
    misplaced(['values', 'min', 'max']);
    if (spec.pattern === undefined) throw fail('a string parameter needs a pattern its values must match whole');
    try {
      matcher = new RegExp(`^(?:${spec.pattern})$`, 'u');
    } catch (error) {
      throw fail(`pattern is not a regular expression: ${(error as Error).message}`);
    }
  }
  const values = (spec.values ?? []).map(String);
  const dashed = values.filter((value) => value.startsWith('-'));
  if (dashed.length && spec.allow_dash !== true) throw fail(`values ${dashed.join(', ')} start with "-": say allow_dash: true if they are meant as options`);
  const declared: CommandParam = {
    name,
    type: spec.type,
    description: spec.description,
    values,
    min: spec.min,
    max: spec.max,
    pattern: spec.pattern,
    matcher,
    maxLength: spec.max_length ?? 256,
    allowDash: spec.allow_dash === true,
    default: undefined,
  };
  if (spec.default === undefined) return declared;
  try {
    return { ...declared, default: paramArgument(command, declared, spec.default) };
  } catch (error) {
    throw fail(`default: ${(error as Error).message.slice(`${command}: ${name} `.length)}`);
  }
}

function runAs(given: string | number, context: CommandFileContext, fail: (why: string) => FleetError): SystemUser {
  const user =
    typeof given === 'number'
      ? (context.accounts.user(context.accounts.userName(given) ?? '') ?? { name: String(given), uid: given, gid: given })
      : context.accounts.user(given);
  if (!user) throw fail(`run_as: no user "${given}" on this machine`);
  if (context.agentUid !== 0 && user.uid !== context.agentUid) {
    throw fail(`run_as: the agent runs as uid ${context.agentUid} and cannot become ${user.name} (uid ${user.uid}); run it as root, or drop run_as`);
  }
  return user;
}

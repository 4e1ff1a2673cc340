import type { SystemUser } from '../../options/system-accounts.ts';

export type ParamType = 'enum' | 'integer' | 'string';

/** One typed parameter of a named command, as the operator declared it. */
export interface CommandParam {
  readonly name: string;
  readonly type: ParamType;
  readonly description: string | undefined;
  /** For `enum`: the only values accepted, as arguments. */
  readonly values: readonly string[];
  /** For `integer`: the bounds, when declared. */
  readonly min: number | undefined;
  readonly max: number | undefined;
  /** For `string`: the pattern as written, and the same anchored to the whole value. */
  readonly pattern: string | undefined;
  readonly matcher: RegExp | undefined;
  readonly maxLength: number;
  /** A value starting with `-` is accepted (it could otherwise be read as an option). */
  readonly allowDash: boolean;
  /** The argument when the call gives none; undefined: the call must give one. */
  readonly default: string | undefined;
}

/** One element of a command's argv after its program: written as is, or one whole parameter. */
export type ArgvPart = { readonly literal: string } | { readonly param: string };

/**
 * A command the operator declared (--commands FILE), checked when the agent
 * starts: its program is an absolute path that exists, each parameter is used
 * as one whole argument, and its level is 1 to 3.
 */
export interface CommandDefinition {
  readonly name: string;
  readonly description: string;
  /** The program, an absolute path (a bare name is found on COMMAND_PATH when the file is read). */
  readonly program: string;
  readonly argv: readonly ArgvPart[];
  readonly params: readonly CommandParam[];
  readonly timeoutS: number;
  readonly outputKib: number;
  /** The user it runs as; undefined: the agent's own. */
  readonly runAs: SystemUser | undefined;
  readonly level: 1 | 2 | 3;
  readonly destructive: boolean;
}

/** The only environment a command gets: this PATH, and nothing of the agent's. */
export const COMMAND_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The argv as the operator wrote it, its program resolved: `{name}` where a parameter goes. */
export function argvTemplate(command: CommandDefinition): string[] {
  return [command.program, ...command.argv.map((part) => ('literal' in part ? part.literal : `{${part.param}}`))];
}

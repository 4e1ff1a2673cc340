import type { CommandDefinition } from '../../../shared/domains/commands/command-definition.ts';
import { paramArgument } from '../../../shared/domains/commands/param-argument.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';

/**
 * The final argv of a named command for the parameters a call gave: the
 * operator's program and literal elements as declared, each `{param}` replaced
 * by that parameter's one checked argument (never split, never joined with
 * other text). Parameters the declaration does not name, and missing ones
 * without a default, are refused before anything runs.
 */
export function commandArgv(command: CommandDefinition, given: Readonly<Record<string, string | number>>): string[] {
  const declared = command.params.map((param) => param.name);
  const unknown = Object.keys(given).filter((name) => !declared.includes(name));
  if (unknown.length) {
    throw new FleetError('invalid_argument', `${command.name} takes no parameter ${unknown.join(', ')}`, {
      hint: declared.length ? `Its parameters: ${declared.join(', ')}.` : 'It takes no parameters: call it with its name alone.',
    });
  }
  const args = new Map(
    command.params.map((param) => {
      const value = Object.hasOwn(given, param.name) ? given[param.name] : param.default;
      if (value === undefined) {
        throw new FleetError('invalid_argument', `${command.name} needs its parameter ${param.name}`, {
          hint: `command_list shows the parameters of ${command.name} on this host.`,
        });
      }
      return [param.name, paramArgument(command.name, param, value)];
    }),
  );
  return [command.program, ...command.argv.map((part) => ('literal' in part ? part.literal : (args.get(part.param) as string)))];
}

import { FleetError } from '../../errors/fleet-error.ts';
import type { CommandParam } from './command-definition.ts';

/** A `..` among a value's path segments: no pattern's oversight lets a value climb out of the directory it names. */
const PARENT_SEGMENT = /(^|\/)\.\.(\/|$)/;
const WHOLE_NUMBER = /^-?\d{1,15}$/;

/**
 * The one argument a parameter's value becomes, or the `invalid_argument`
 * that refuses it. Whatever the value holds (`;`, `$(…)`, a newline, spaces)
 * stays inside that one argument, since no shell reads it; what is checked
 * here is what the program itself would misread: a value outside the enum, an
 * integer that is not only digits, a string outside its pattern (matched
 * whole) or holding a `..` segment, and any value starting with `-` (an
 * option) unless the parameter declares `allow_dash: true`.
 */
export function paramArgument(command: string, param: CommandParam, value: string | number): string {
  const refuse = (why: string) =>
    new FleetError('invalid_argument', `${command}: ${param.name} ${why}`, {
      hint: `command_list shows the parameters of ${command} on this host.`,
    });
  let text: string;
  switch (param.type) {
    case 'enum':
      text = String(value);
      if (!param.values.includes(text)) throw refuse(`must be one of ${param.values.join(', ')}, not ${JSON.stringify(text)}`);
      break;
    case 'integer': {
      const number = typeof value === 'number' ? value : WHOLE_NUMBER.test(value) ? Number(value) : Number.NaN;
      if (!Number.isSafeInteger(number)) throw refuse(`must be a whole number, not ${JSON.stringify(value)}`);
      if (param.min !== undefined && number < param.min) throw refuse(`must be at least ${param.min}, not ${number}`);
      if (param.max !== undefined && number > param.max) throw refuse(`must be at most ${param.max}, not ${number}`);
      text = String(number);
      break;
    }
    case 'string':
      text = String(value);
      if (text.length > param.maxLength) throw refuse(`is ${text.length} characters, more than its ${param.maxLength}`);
      if (text.includes('\0')) throw refuse('holds a NUL character');
      if (!param.matcher?.test(text)) throw refuse(`${JSON.stringify(text)} does not match its pattern ${param.pattern ?? ''}`);
      if (PARENT_SEGMENT.test(text)) throw refuse(`${JSON.stringify(text)} holds a .. path segment`);
      break;
  }
  if (text.startsWith('-') && !param.allowDash) {
    throw refuse(`${JSON.stringify(text)} starts with "-", which the program would read as an option (the parameter does not say allow_dash: true)`);
  }
  return text;
}

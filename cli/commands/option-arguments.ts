import { FleetError } from '../../shared/errors/fleet-error.ts';

/** An option's text as an argument value: JSON when it parses (numbers, booleans, lists), else the text itself. */
function argumentValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * The tool arguments that options which are none of `fleetmesh call`'s flags
 * stand for: `--sort_by mem` (or `--sort-by mem`) is the parameter sort_by
 * when the tool has one. Any other option is refused with the exact `--arg`
 * spelling, or the tool's parameters when it names none of them.
 */
export function optionArguments(tool: string, extra: readonly [string, string][], params: readonly string[] | undefined): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [option, raw] of extra) {
    const key = params?.find((param) => param === option || param === option.replaceAll('-', '_'));
    if (key !== undefined) {
      args[key] = argumentValue(raw);
      continue;
    }
    const spelled = `--arg ${option.replaceAll('-', '_')}=${raw}`;
    throw new FleetError('invalid_argument', `unknown option '--${option}'`, {
      hint:
        params === undefined
          ? `Tool arguments go as ${spelled}.`
          : params.length
            ? `${tool} has no parameter ${option}; its parameters: ${params.join(', ')} (each as --arg NAME=VALUE).`
            : `${tool} takes no parameters.`,
    });
  }
  return args;
}

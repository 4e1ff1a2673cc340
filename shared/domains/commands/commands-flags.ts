import type { FlagSpecs } from '../../options/command-line.ts';

/** The agent flag of the commands collector: without it, command_run runs nothing. */
export const COMMANDS_FLAGS = {
  commands: {
    type: 'string',
    description: 'YAML file of the named commands command_run may run: each a name, an argv list ({param} for a parameter), params, level…',
    placeholder: 'FILE',
  },
} as const satisfies FlagSpecs;

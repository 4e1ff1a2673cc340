import type { CommandSpec, FlagSpecs, ParsedCommand } from '../shared/options/command-line.ts';

/** Where a command writes, and the environment it reads (only main passes process.env). */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
}

export interface Command<S extends FlagSpecs = FlagSpecs> {
  spec: CommandSpec<S>;
  /** Resolves with the exit code. */
  run(parsed: ParsedCommand<S>, io: CliIo): Promise<number>;
}

export function defineCommand<S extends FlagSpecs>(command: Command<S>): Command<S> {
  return command;
}

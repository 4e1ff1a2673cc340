import { userInfo } from 'node:os';
import { argvTemplate, type CommandDefinition } from '../../../shared/domains/commands/command-definition.ts';
import type { commandList, commandRun } from '../../../shared/domains/commands/commands-actions.ts';
import type { CommandsOptions } from '../../../shared/domains/commands/commands-options.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { closestNames } from '../../../shared/format/closest-names.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { CallContext, Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { commandArgv } from './command-argv.ts';
import { runProcess } from './command-process.ts';

/** Commands running at once on a host, at most: a fleet-wide call of a slow one does not pile up on a host. */
const MAX_RUNNING = 4;
/** Time kept back before the call's deadline to stop a command and answer. */
const ANSWER_MARGIN_MS = 1500;

const HOW_TO_DECLARE =
  'Declare them in a YAML file given to the agent as --commands FILE (or commands: FILE in its config file), a list such as: ' +
  '- {name: disk_usage, argv: [df, -h, "{mount}"], params: {mount: {type: enum, values: [/, /var]}}, level: 1}. ' +
  'Each entry: name, argv, params (enum | integer | string with a pattern), timeout_s, output_kib, run_as, level 1-3, destructive.';

/**
 * Runs the commands the host's operator declared (--commands), by name, and
 * nothing else. The broker shows command_run at the lowest level a command
 * may have (1); a command declared above the caller's level is refused here
 * with `forbidden` (which the broker audits), and a destructive one without
 * `confirm: true` with `confirm_required` naming the argv it would run.
 */
export class CommandsCollector implements Collector {
  readonly name = 'commands';
  private running = 0;
  private readonly agentUser = userInfo().username;
  private readonly stopping = new AbortController();

  constructor(
    private readonly options: CommandsOptions,
    private readonly log: Logger,
  ) {}

  async probe(): Promise<CollectorStatus> {
    if (this.options.commands.length) return { available: true, reason: '' };
    return {
      available: false,
      absent: true,
      reason: this.options.file ? `${this.options.file} (--commands) declares no commands` : 'no commands are declared (--commands)',
    };
  }

  register(dispatcher: Dispatcher): void {
    dispatcher.register<typeof commandList>('commands.list', async () => {
      const commands = this.declared().map((command) => ({
        name: command.name,
        description: command.description,
        argv: argvTemplate(command),
        params: command.params.map((param) => ({
          name: param.name,
          type: param.type,
          ...(param.type === 'enum' ? { values: [...param.values] } : {}),
          ...(param.min !== undefined ? { min: param.min } : {}),
          ...(param.max !== undefined ? { max: param.max } : {}),
          ...(param.pattern !== undefined ? { pattern: param.pattern } : {}),
          allow_dash: param.allowDash,
          ...(param.default !== undefined ? { default: param.default } : {}),
          ...(param.description ? { description: param.description } : {}),
        })),
        level: command.level,
        destructive: command.destructive,
        timeout_s: command.timeoutS,
        output_kib: command.outputKib,
        run_as: command.runAs?.name ?? this.agentUser,
      }));
      return { payload: { commands, count: commands.length } };
    });
    dispatcher.register<typeof commandRun>('commands.run', async (params, context) => ({ payload: await this.run(params, context) }));
  }

  async stop(): Promise<void> {
    this.stopping.abort();
  }

  private declared(): readonly CommandDefinition[] {
    if (this.options.commands.length) return this.options.commands;
    throw new FleetError('collector_unavailable', `no commands are declared on this host${this.options.file ? ` (${this.options.file} lists none)` : ''}`, {
      collector: this.name,
      hint: HOW_TO_DECLARE,
    });
  }

  private async run(params: { name: string; params?: Record<string, string | number> | undefined; confirm?: boolean | undefined }, context: CallContext) {
    const declared = this.declared();
    const command = declared.find((candidate) => candidate.name === params.name);
    if (!command) {
      const closest = closestNames(
        params.name,
        declared.map((c) => c.name),
      );
      throw new FleetError('not_found', `no command "${params.name}" is declared on this host`, {
        hint: `${closest.length ? `Closest: ${closest.join(', ')}. ` : ''}command_list shows the ${declared.length} declared here.`,
      });
    }
    if (command.level > context.callerLevel) {
      throw new FleetError('forbidden', `${command.name} is level ${command.level} on this host, above this identity's level ${context.callerLevel}`, {
        hint: `An identity at operations level ${command.level} may run it.`,
      });
    }
    const argv = commandArgv(command, params.params ?? {});
    if (command.destructive && params.confirm !== true) {
      throw new FleetError('confirm_required', `${command.name} is destructive; on this host it would run ${JSON.stringify(argv)}`, {
        hint: 'Nothing ran. Call again with confirm: true to run it.',
      });
    }
    const leftMs = context.deadlineUnixMs - Date.now() - ANSWER_MARGIN_MS;
    const ownMs = command.timeoutS * 1000;
    if (leftMs <= 0)
      throw new FleetError('deadline_exceeded', `the call's deadline leaves no time to run ${command.name}`, {
        hint: `Call again with timeout_ms ${ownMs + 5000}.`,
      });
    if (this.running >= MAX_RUNNING) {
      throw new FleetError('conflict', `${MAX_RUNNING} commands are already running on this host`, { hint: 'Call again once they finish.' });
    }
    const runAs = command.runAs?.name ?? this.agentUser;
    this.log.info('running a named command', { caller: context.caller, call_id: context.callId, command: command.name, argv, run_as: runAs });
    this.running += 1;
    try {
      const outcome = await runProcess({
        argv,
        user: command.runAs,
        timeoutMs: Math.min(ownMs, leftMs),
        outputBytes: command.outputKib * 1024,
        signal: AbortSignal.any([context.signal, this.stopping.signal]),
      });
      const stoppedReason =
        outcome.stopped === 'timeout'
          ? ownMs <= leftMs
            ? `stopped at its timeout of ${command.timeoutS} s (timeout_s)`
            : `stopped after ${(leftMs / 1000).toFixed(1)} s at the call's deadline, before its own timeout of ${command.timeoutS} s: call again with timeout_ms ${ownMs + 5000}`
          : outcome.stopped === 'output'
            ? `stopped when its output passed ${command.outputKib} KiB (output_kib); the lines before are kept`
            : outcome.stopped === 'cancelled'
              ? 'stopped: the call was cancelled'
              : undefined;
      return {
        name: command.name,
        argv,
        run_as: runAs,
        exit_code: outcome.exitCode,
        signal: outcome.signal,
        duration_ms: outcome.durationMs,
        lines: outcome.lines,
        output_bytes: outcome.outputBytes,
        ...(stoppedReason ? { stopped_reason: stoppedReason } : {}),
      };
    } finally {
      this.running -= 1;
    }
  }
}

import { FleetError, toFleetError } from '../shared/errors/fleet-error.ts';
import { type FlagSpecs, formatHelp, parseCommandLine } from '../shared/options/command-line.ts';
import { FLEETMESH_VERSION } from '../shared/version.ts';
import type { CliIo, Command } from './command.ts';
import { agentCommand } from './commands/agent-command.ts';
import { agentsApproveCommand } from './commands/agents-approve-command.ts';
import { agentsCommand } from './commands/agents-command.ts';
import { auditCommand } from './commands/audit-command.ts';
import { bootstrapCommand } from './commands/bootstrap-command.ts';
import { brokerCommand } from './commands/broker-command.ts';
import { callCommand } from './commands/call-command.ts';
import { identityCreateCommand, identityListCommand, identityRevokeCommand } from './commands/identity-command.ts';
import { revokeCommand } from './commands/revoke-command.ts';
import { stdioCommand } from './commands/stdio-command.ts';
import { tokenCreateCommand, tokenListCommand, tokenRevokeCommand } from './commands/token-command.ts';
import { upCommand } from './commands/up-command.ts';

const COMMANDS: Command<FlagSpecs>[] = [
  upCommand,
  brokerCommand,
  agentCommand,
  bootstrapCommand,
  tokenCreateCommand,
  tokenListCommand,
  tokenRevokeCommand,
  agentsCommand,
  agentsApproveCommand,
  revokeCommand,
  identityCreateCommand,
  identityListCommand,
  identityRevokeCommand,
  auditCommand,
  callCommand,
  stdioCommand,
] as unknown as Command<FlagSpecs>[];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.spec.name.length));
  return [
    `fleetmesh ${FLEETMESH_VERSION}: operate a fleet of hosts from one MCP endpoint.`,
    '',
    'Usage: fleetmesh COMMAND [flags]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.spec.name.padEnd(width)}  ${c.spec.summary}`),
    '',
    'Every command takes --help. Flags also read FLEETMESH_* environment variables, and long-running commands a YAML --config file.',
  ].join('\n');
}

/** Finds the command named by the first one or two words. */
function findCommand(argv: string[]): { command: Command<FlagSpecs>; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS.find((c) => c.spec.name === name);
    if (command) return { command, rest: argv.slice(words) };
  }
  return undefined;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    io.stdout(`${overview()}\n`);
    return first === undefined ? 2 : 0;
  }
  if (first === '--version' || first === 'version') {
    io.stdout(`${FLEETMESH_VERSION}\n`);
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = COMMANDS.filter((c) => c.spec.name.startsWith(`${first} `)).map((c) => c.spec.name);
    const hint = group.length ? `Did you mean: ${group.join(', ')}?` : 'Run fleetmesh --help for the list of commands.';
    io.stderr(`fleetmesh: unknown command "${argv.slice(0, group.length ? 2 : 1).join(' ')}". ${hint}\n`);
    return 2;
  }
  try {
    const parsed = parseCommandLine(found.command.spec, found.rest, io.env);
    if (parsed.help) {
      io.stdout(`${formatHelp(found.command.spec)}\n`);
      return 0;
    }
    return await found.command.run(parsed, io);
  } catch (error) {
    const failure = toFleetError(error);
    // One line: what is wrong, then what to do about it.
    io.stderr(`fleetmesh ${found.command.spec.name}: ${failure.message}${failure.hint ? ` (${failure.hint.replace(/\.$/, '')})` : ''}\n`);
    return error instanceof FleetError && failure.code === 'invalid_argument' ? 2 : 1;
  }
}

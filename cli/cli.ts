import type { FlagSpecs } from '../shared/options/command-line.ts';
import { FLEETMESH_VERSION } from '../shared/version.ts';
import type { CliIo, Command } from './command.ts';
import { fencedIo, runCommand } from './run-command.ts';

/**
 * Every command by name, its module loaded only when it runs: a command pulls
 * in the broker, the agent or the MCP client, and `fleetmesh --help` or a quick
 * `fleetmesh call` should not pay for the others. Each summary is the one its
 * command's spec carries (cli.test.ts checks that they agree).
 */
interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command<FlagSpecs>>;
}

function entry<S extends FlagSpecs>(name: string, summary: string, load: () => Promise<Command<S>>): CommandEntry {
  return { name, summary, load: load as unknown as () => Promise<Command<FlagSpecs>> };
}

export const COMMANDS: CommandEntry[] = [
  entry(
    'up',
    'Start a broker and a local agent on this machine, with nothing to configure (what npm start runs).',
    async () => (await import('./commands/up-command.ts')).upCommand,
  ),
  entry(
    'broker',
    'Run the broker: agents connect to it over gRPC with mutual TLS; MCP clients talk only to it.',
    async () => (await import('./commands/broker-command.ts')).brokerCommand,
  ),
  entry(
    'agent',
    'Run the agent on this host: enroll with a join token on first run, then keep one outbound stream to the broker.',
    async () => (await import('./commands/agent-command.ts')).agentCommand,
  ),
  entry(
    'bootstrap',
    'Make a broker CA, a reusable join token and an admin token as files, before any broker runs (for Docker and Kubernetes secrets).',
    async () => (await import('./commands/bootstrap-command.ts')).bootstrapCommand,
  ),
  entry(
    'token create',
    'Create a join token for enrolling agents, and print the exact agent command line that uses it.',
    async () => (await import('./commands/token-command.ts')).tokenCreateCommand,
  ),
  entry(
    'token list',
    'List join tokens: id, uses, expiry, labels, roles (never the secret).',
    async () => (await import('./commands/token-command.ts')).tokenListCommand,
  ),
  entry(
    'token revoke',
    'Revoke a join token so no further agent can enroll with it (enrolled agents stay).',
    async () => (await import('./commands/token-command.ts')).tokenRevokeCommand,
  ),
  entry(
    'agents',
    "List the broker's agents: name, state, version, labels, last seen, certificate expiry.",
    async () => (await import('./commands/agents-command.ts')).agentsCommand,
  ),
  entry(
    'agents approve',
    "Approve what an agent claims over a shared object (a cluster's manager or member role), or withdraw it.",
    async () => (await import('./commands/agents-approve-command.ts')).agentsApproveCommand,
  ),
  entry(
    'ca status',
    "Show the fleet CAs: the rotation's phase, each CA's pin and state, and which agents hold certificates of each.",
    async () => (await import('./commands/ca-command.ts')).caStatusCommand,
  ),
  entry(
    'ca rotate',
    'Take the next step of a CA rotation (init, update-clients, update-servers, standby) or roll it back; running brokers follow within a second.',
    async () => (await import('./commands/ca-command.ts')).caRotateCommand,
  ),
  entry(
    'brokers',
    'List the brokers of a cluster as registered on its store: id, when started, whether stopped or removed.',
    async () => (await import('./commands/brokers-command.ts')).brokersCommand,
  ),
  entry(
    'brokers remove',
    'Remove a broker from a cluster: the others drop its bus messages from now on, and its id cannot register again.',
    async () => (await import('./commands/brokers-command.ts')).brokersRemoveCommand,
  ),
  entry(
    'revoke',
    "Revoke an agent's certificates: a running broker closes its stream at once and refuses it from then on.",
    async () => (await import('./commands/revoke-command.ts')).revokeCommand,
  ),
  entry(
    'identity create',
    'Create an MCP client identity and print its bearer token (shown once; stored hashed).',
    async () => (await import('./commands/identity-command.ts')).identityCreateCommand,
  ),
  entry(
    'identity list',
    'List MCP client identities: name, level, grants, expiry, last use.',
    async () => (await import('./commands/identity-command.ts')).identityListCommand,
  ),
  entry(
    'identity revoke',
    'Revoke an MCP client identity: its token stops working at its next request.',
    async () => (await import('./commands/identity-command.ts')).identityRevokeCommand,
  ),
  entry(
    'identity map',
    'Add a rule mapping people signed in through OAuth to a level, grants and tools; the first rule that matches decides.',
    async () => (await import('./commands/identity-map-command.ts')).identityMapCommand,
  ),
  entry(
    'identity rules',
    'List the rules mapping people signed in through OAuth, in the order they are tried.',
    async () => (await import('./commands/identity-map-command.ts')).identityRulesCommand,
  ),
  entry(
    'identity unmap',
    'Remove a mapping rule: the people it let in are refused at their next request, unless another rule maps them.',
    async () => (await import('./commands/identity-map-command.ts')).identityUnmapCommand,
  ),
  entry(
    'approvals list',
    "List the calls waiting for a second person's approval: caller, tool, exact targets and arguments.",
    async () => (await import('./commands/approvals-command.ts')).approvalsListCommand,
  ),
  entry(
    'approvals approve',
    'Approve a call waiting for a second person; it runs at once.',
    async () => (await import('./commands/approvals-command.ts')).approvalsApproveCommand,
  ),
  entry(
    'approvals deny',
    'Deny a call waiting for a second person; it fails as forbidden, nothing changed.',
    async () => (await import('./commands/approvals-command.ts')).approvalsDenyCommand,
  ),
  entry(
    'audit',
    'Show the audit log: every call of level 1 or more, and every refusal, newest first.',
    async () => (await import('./commands/audit-command.ts')).auditCommand,
  ),
  entry(
    'config validate',
    "Check a broker's or an agent's --config file before starting it: every problem, with its line.",
    async () => (await import('./commands/config-validate-command.ts')).configValidateCommand,
  ),
  entry(
    'call',
    'Run any tool through the broker with an identity token; per-host progress on stderr.',
    async () => (await import('./commands/call-command.ts')).callCommand,
  ),
  entry(
    'stdio',
    'An MCP server on stdio that relays to a broker, for clients that only speak stdio.',
    async () => (await import('./commands/stdio-command.ts')).stdioCommand,
  ),
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `fleetmesh ${FLEETMESH_VERSION}: operate a fleet of hosts from one MCP endpoint.`,
    '',
    'Usage: fleetmesh COMMAND [flags]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Every command takes --help. Flags also read FLEETMESH_* environment variables, and long-running commands a YAML --config file.',
  ].join('\n');
}

/** Finds the command named by the first one or two words. */
function findCommand(argv: string[]): { entry: CommandEntry; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const found = COMMANDS.find((c) => c.name === name);
    if (found) return { entry: found, rest: argv.slice(words) };
  }
  return undefined;
}

/** Runs the command that argv names, or prints the overview, the version, or what was not understood. */
export async function runCli(argv: string[], unfenced: CliIo): Promise<number> {
  const io = fencedIo(unfenced);
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
    const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `)).map((c) => c.name);
    const hint = group.length ? `Did you mean: ${group.join(', ')}?` : 'Run fleetmesh --help for the list of commands.';
    io.stderr(`fleetmesh: unknown command "${argv.slice(0, group.length ? 2 : 1).join(' ')}". ${hint}\n`);
    return 2;
  }
  return runCommand(found.entry.name, found.entry.load, found.rest, io);
}

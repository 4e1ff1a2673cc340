import { FLEETMESH_VERSION } from '../shared/version.ts';
import { fencedIo, runCommand } from './run-command.ts';

/**
 * `fleetmesh agent` as a program of its own: what `npm run build` bundles
 * into `dist/agent.cjs`, the one file the agent's deployments run. It holds
 * the agent and nothing of the broker or the MCP client, as CommonJS: an ES
 * module entry costs a process Node's ES module loader, about 2.5 MiB of an
 * idle agent's memory on Node 24 (docs/performance.md, the idle agent). It takes
 * the agent's flags, after an optional `agent`, so a deployment's command
 * line is the same for `fleetmesh.js agent …` and `agent.cjs agent …`.
 */
const argv = process.argv.slice(2);
if (argv[0] === 'agent') argv.shift();
const io = fencedIo({ stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text), env: process.env });

if (argv[0] === '--version' || argv[0] === 'version') {
  io.stdout(`${FLEETMESH_VERSION}\n`);
} else {
  void runCommand('agent', async () => (await import('./commands/agent-command.ts')).agentCommand, argv, io).then((code) => {
    process.exitCode = code;
    // As cli/main.ts: nothing should keep the process alive once the command has returned.
    setTimeout(() => process.exit(), 2000).unref();
  });
}

import { runCli } from './cli.ts';
import type { CliIo } from './command.ts';

const io: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};
process.exitCode = await runCli(process.argv.slice(2), io);
// Nothing should keep the process alive once a command has returned; if
// something does (a socket left open), leave rather than hang.
setTimeout(() => process.exit(), 2000).unref();

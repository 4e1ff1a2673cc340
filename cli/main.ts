import * as grpc from '@grpc/grpc-js';
import { runCli } from './cli.ts';
import type { CliIo } from './command.ts';

// grpc-js logs to stderr by itself; every failure it reports reaches us as an error we word better.
grpc.setLogVerbosity(grpc.logVerbosity.NONE);

const io: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};
process.exitCode = await runCli(process.argv.slice(2), io);
// Nothing should keep the process alive once a command has returned; if
// something does (a socket left open), leave rather than hang.
setTimeout(() => process.exit(), 2000).unref();

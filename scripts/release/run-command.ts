import { spawn } from 'node:child_process';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Passed through to the terminal instead of kept (long builds a person watches). */
  inherit?: boolean;
  /** Resolve with stdout's bytes rather than its text. */
  binary?: boolean;
}

/**
 * Runs a command to completion without blocking the event loop (a build takes
 * tens of seconds and a test worker must keep answering); resolves with its
 * stdout, rejects with the end of its stderr.
 */
export function runCommand(command: string, args: string[], options: RunOptions & { binary: true }): Promise<Buffer>;
export function runCommand(command: string, args: string[], options?: RunOptions): Promise<string>;
export function runCommand(command: string, args: string[], options: RunOptions = {}): Promise<string | Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', options.inherit ? 'inherit' : 'pipe', options.inherit ? 'inherit' : 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(options.binary ? Buffer.concat(stdout) : Buffer.concat(stdout).toString());
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${Buffer.concat(stderr).toString().slice(-3000)}`));
    });
  });
}

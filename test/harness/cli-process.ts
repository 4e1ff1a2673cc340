import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.ts';

export const FLEETMESH_BIN = fileURLToPath(new URL('../../bin/fleetmesh.js', import.meta.url));

/** A `fleetmesh …` process, with its output kept for assertions. */
export class CliProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  exitCode: number | null | undefined;

  /**
   * `entry`: another build of the CLI to run (the benchmarks run the compiled dist/); `prefix`: a command that runs
   * it (`ip netns exec NS`), which must exec it in place so signals reach the CLI itself; `nodeFlags`: flags for node
   * itself that NODE_OPTIONS does not take (`--lite-mode`); `node`: another node binary (the image's version).
   */
  constructor(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; entry?: string; prefix?: string[]; nodeFlags?: string[]; node?: string } = {}) {
    const node = options.node ?? process.execPath;
    const [command = node, ...before] = [...(options.prefix ?? []), node];
    this.child = spawn(command, [...before, ...(options.nodeFlags ?? []), options.entry ?? FLEETMESH_BIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (data: Buffer) => {
      this.stdout += data.toString();
    });
    this.child.stderr?.on('data', (data: Buffer) => {
      this.stderr += data.toString();
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? null : code);
        resolve(code);
      });
    });
  }

  get output(): string {
    return this.stdout + this.stderr;
  }

  /** Waits until stdout or stderr matches. */
  async waitForOutput(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
    return waitFor(() => this.output.match(pattern), { timeoutMs, what: `output matching ${pattern} (output so far: ${this.output.slice(-2000)})` });
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Stops the process (SIGTERM, then SIGKILL if it has not exited after `killAfterMs`: a broker stopping in order may need its stop grace) and waits for it. */
  async stop(killAfterMs = 5000): Promise<void> {
    if (this.exitCode !== undefined) return;
    this.child.kill('SIGCONT');
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), killAfterMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Runs a `fleetmesh …` command to completion. */
export async function runFleetmesh(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const process = new CliProcess(args, options);
  const code = await process.exited;
  return { code, stdout: process.stdout, stderr: process.stderr };
}

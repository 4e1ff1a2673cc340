import { StringDecoder } from 'node:string_decoder';
import { COMMAND_PATH } from '../../../shared/domains/commands/command-definition.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { childProcess } from '../../lazy-builtins.ts';

type Stream = 'stdout' | 'stderr';

export interface ProcessRequest {
  argv: readonly string[];
  /** The user to run as; undefined: the agent's own. */
  user: { uid: number; gid: number } | undefined;
  timeoutMs: number;
  outputBytes: number;
  signal: AbortSignal;
}

export interface ProcessOutcome {
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  /** Both streams' lines in the order they came. */
  lines: { stream: Stream; text: string }[];
  outputBytes: number;
  /** What stopped it before it ended by itself. */
  stopped: 'timeout' | 'output' | 'cancelled' | undefined;
}

/** How long a stopped command has between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 500;

/**
 * Runs one argv as it is: no shell (`shell: false`), an environment of PATH
 * alone, `/` as its directory, no stdin, as the given user (libuv drops the
 * agent's supplementary groups with it), in a process group of its own. The
 * group is stopped (SIGTERM, then SIGKILL) at the timeout, once the output
 * passes its cap, or on cancel; and whatever it left running is killed when
 * its first process ends, so a command leaves nothing behind.
 */
export function runProcess(request: ProcessRequest): Promise<ProcessOutcome> {
  const [program, ...args] = request.argv;
  const startedMs = performance.now();
  return new Promise((resolve, reject) => {
    const child = childProcess().spawn(program as string, args, {
      shell: false,
      env: { PATH: COMMAND_PATH },
      cwd: '/',
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      ...(request.user ? { uid: request.user.uid, gid: request.user.gid } : {}),
    });
    const lines: ProcessOutcome['lines'] = [];
    let outputBytes = 0;
    let stopped: ProcessOutcome['stopped'];
    let exited = false;
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // ESRCH: nothing of the group is left.
      }
    };
    let forceTimer: NodeJS.Timeout | undefined;
    const stop = (why: NonNullable<ProcessOutcome['stopped']>) => {
      if (stopped || exited) return;
      stopped = why;
      killGroup('SIGTERM');
      forceTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => stop('timeout'), request.timeoutMs);
    const onAbort = () => stop('cancelled');
    request.signal.addEventListener('abort', onAbort, { once: true });

    const pending: Record<Stream, string> = { stdout: '', stderr: '' };
    const decoders: Record<Stream, StringDecoder> = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    const take = (stream: Stream, text: string) => {
      const parts = (pending[stream] + text).split('\n');
      pending[stream] = parts.pop() ?? '';
      for (const line of parts) lines.push({ stream, text: line.endsWith('\r') ? line.slice(0, -1) : line });
    };
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].on('data', (chunk: Buffer) => {
        const room = request.outputBytes - outputBytes;
        if (room <= 0) return;
        const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
        outputBytes += kept.length;
        take(stream, decoders[stream].write(kept));
        if (chunk.length > room) stop('output');
      });
    }
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(forceTimer);
      request.signal.removeEventListener('abort', onAbort);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      finish();
      reject(
        new FleetError('collector_failed', `${program} could not be started: ${error.code ?? error.message}`, {
          hint:
            error.code === 'EPERM'
              ? "The agent lacks the right to switch users (run it as root, or drop the command's run_as)."
              : "The host's operator can check the command's program (command_list shows it).",
          cause: error,
        }),
      );
    });
    child.once('exit', () => {
      exited = true;
      // Whatever the command started in the background goes with it, and its pipes close.
      killGroup('SIGKILL');
    });
    child.once('close', (code, signal) => {
      finish();
      for (const stream of ['stdout', 'stderr'] as const) {
        take(stream, decoders[stream].end());
        if (pending[stream] !== '') lines.push({ stream, text: pending[stream] });
      }
      resolve({ exitCode: code, signal, durationMs: Math.round(performance.now() - startedMs), lines, outputBytes, stopped });
    });
  });
}

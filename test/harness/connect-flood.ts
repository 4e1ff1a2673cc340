import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.ts';

const FLOOD = fileURLToPath(new URL('./connect-flood.mjs', import.meta.url));

export interface ConnectFloodOptions {
  port: number;
  host?: string;
  /** The source address: a loopback address of its own (127.0.0.2) stands for another host. */
  from: string;
  /** Connections opened a second. */
  perSecond: number;
  /** Connections open at once, at most (the flood's own descriptors). */
  maxOpen?: number;
  /** Each connection is reset after a random part of this, unless the server closed it first; 0 holds it until then. */
  holdMs?: number;
  /** What each connection sends once connected: nothing for a bare connect, part of a request for an unfinished one. */
  send?: string;
}

/** What the flood has done so far. */
export interface FloodCounts {
  connects: number;
  open: number;
  closed_by_server: number;
  failed: number;
}

/** A flood of TCP connections from a process of its own (connect-flood.mjs); stop() ends it. */
export class ConnectFlood {
  private output = '';

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on('data', (data: Buffer) => {
      // Only the last line matters: keep a little.
      this.output = (this.output + data.toString()).slice(-1000);
    });
  }

  static start(options: ConnectFloodOptions): ConnectFlood {
    const settings = { host: '127.0.0.1', maxOpen: 5000, holdMs: 0, send: '', ...options };
    return new ConnectFlood(spawn(process.execPath, [FLOOD, JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'inherit'] }));
  }

  /** The counts of its last line (all 0 before the first). */
  get counts(): FloodCounts {
    const line = this.output.trimEnd().split('\n').at(-1) ?? '';
    const count = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(line)?.[1] ?? 0);
    return { connects: count('connects'), open: count('open'), closed_by_server: count('closed_by_server'), failed: count('failed') };
  }

  /** Resolves once the flood has made `connects` connections in all. */
  async reached(connects: number): Promise<FloodCounts> {
    return waitFor(() => (this.counts.connects >= connects ? this.counts : undefined), { what: `${connects} flood connections`, timeoutMs: 60_000 });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

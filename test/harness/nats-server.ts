import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './free-port.ts';
import { waitFor } from './wait.ts';

/**
 * A private nats-server (the Debian package) on a loopback port of its own,
 * for the brokers of one test file. `stop()` and `start()` again on the same
 * port let a test take the bus away and bring it back.
 */
export class NatsServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly port: number,
    private extraArgs: string[],
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** `extraArgs`: more nats-server flags, such as `--auth TOKEN`. */
  static async start(extraArgs: string[] = []): Promise<NatsServer> {
    const server = new NatsServer(await freePort(), extraArgs);
    await server.start();
    return server;
  }

  /** `extraArgs`: other flags than it was first started with, from now on (a changed `--auth`). */
  async start(extraArgs?: string[]): Promise<void> {
    if (extraArgs) this.extraArgs = extraArgs;
    const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(this.port), ...this.extraArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    child.stderr?.on('data', (data: Buffer) => {
      output += data.toString();
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`nats-server exited: ${output.slice(-2000)}`);
        return accepts(this.port);
      },
      { what: `nats-server on port ${this.port}` },
    );
  }

  /** Stops the server's process where it stands (SIGSTOP) or lets it go on (SIGCONT): a server that answers nothing, with its connections open. */
  freeze(frozen: boolean): void {
    this.child?.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  async stop(): Promise<void> {
    this.freeze(false);
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

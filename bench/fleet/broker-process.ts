import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const RUN_TS = fileURLToPath(new URL('../../bin/run-ts.js', import.meta.url));

/**
 * A broker in a child process of its own (so its CPU time and memory are its
 * own), running a host script, with a request/response channel to it over IPC.
 */
export class BrokerProcess {
  private nextId = 1;
  private readonly waiting = new Map<number, (value: Record<string, unknown>) => void>();
  readonly ready: Promise<Record<string, unknown>>;
  private readonly child: ChildProcess;

  /** `args`: more arguments for the host script, after the data dir. */
  constructor(hostScript: string, dataDir: string, args: string[] = []) {
    this.child = fork(RUN_TS, [hostScript, dataDir, ...args], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.ready = new Promise((resolve, reject) => {
      this.child.once('exit', (code) => reject(new Error(`broker exited with ${code}`)));
      this.waiting.set(0, resolve);
    });
    this.child.on('message', (message: { id: number } & Record<string, unknown>) => {
      this.waiting.get(message.id)?.(message);
      this.waiting.delete(message.id);
    });
  }

  get pid(): number {
    return this.child.pid as number;
  }

  request<T = Record<string, number>>(type: string, extra: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve as (value: Record<string, unknown>) => void);
      this.child.send({ id, type, ...extra });
    });
  }

  /** Takes the broker away as a crash would: no goodbye to its agents or peers. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await Promise.race([this.request('stop'), exited]);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

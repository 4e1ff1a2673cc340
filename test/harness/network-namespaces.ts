import { execFileSync } from 'node:child_process';

/** Whether this process may make network namespaces (root, with iproute2). */
export function canMakeNamespaces(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Two network namespaces joined by a veth pair, each end with an address of
 * its own private /30: the broker side `brokerAddress`, the agent side
 * `agentAddress`. Nothing in them reaches any other network. `cut()` takes the
 * agent's end down (a partition); `restore()` brings it back.
 */
export interface NamespacePair {
  brokerNs: string;
  agentNs: string;
  brokerAddress: string;
  agentAddress: string;
  /** The command prefix that runs a program inside a namespace. */
  exec(ns: string): string[];
  cut(): void;
  restore(): void;
  remove(): void;
}

let made = 0;

export function makeNamespacePair(): NamespacePair {
  made += 1;
  const id = `${process.pid % 10_000}x${made}`;
  const brokerNs = `fmb${id}`;
  const agentNs = `fma${id}`;
  const brokerVeth = `fvb${id}`;
  const agentVeth = `fva${id}`;
  // One /30 per pair in 10.201.0.0/16, chosen by pid and count so parallel runs do not collide.
  const block = ((process.pid * 7 + made) % 16_000) * 4;
  const base = `10.201.${Math.floor(block / 256)}.`;
  const brokerAddress = `${base}${(block % 256) + 1}`;
  const agentAddress = `${base}${(block % 256) + 2}`;
  ip('netns', 'add', brokerNs);
  ip('netns', 'add', agentNs);
  ip('link', 'add', brokerVeth, 'netns', brokerNs, 'type', 'veth', 'peer', 'name', agentVeth, 'netns', agentNs);
  for (const [ns, veth, address] of [
    [brokerNs, brokerVeth, brokerAddress],
    [agentNs, agentVeth, agentAddress],
  ] as const) {
    ip('-n', ns, 'addr', 'add', `${address}/30`, 'dev', veth);
    ip('-n', ns, 'link', 'set', veth, 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  }
  return {
    brokerNs,
    agentNs,
    brokerAddress,
    agentAddress,
    exec: (ns) => ['ip', 'netns', 'exec', ns],
    cut: () => ip('-n', agentNs, 'link', 'set', agentVeth, 'down'),
    restore: () => ip('-n', agentNs, 'link', 'set', agentVeth, 'up'),
    remove: () => {
      for (const ns of [agentNs, brokerNs]) {
        try {
          ip('netns', 'delete', ns);
        } catch {
          // Already gone.
        }
      }
    },
  };
}

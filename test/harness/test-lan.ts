import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';

/** One test host: a network namespace on the test LAN, answering ARP and ping with its own address and MAC. */
export interface LanHost {
  namespace: string;
  ip: string;
  mac: string;
}

/**
 * A LAN the test makes and removes: a bridge in this namespace holding the
 * gateway address, and a network namespace per test host joined to it by a
 * veth pair. Agents of the test fleet see it as one of their own subnets;
 * tests send traffic only to its addresses.
 */
export interface TestLan {
  subnet: string;
  gateway: string;
  broadcast: string;
  hosts: LanHost[];
  /** Runs a Node script inside a host's namespace. */
  runIn(host: LanHost, script: string): ChildProcess;
  remove(): void;
}

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8' });
}

/** A third octet no interface of this machine uses in 10.213.0.0/16. */
function freeOctet(): number {
  const used = new Set(
    Object.values(networkInterfaces())
      .flat()
      .map((a) => a?.address ?? ''),
  );
  for (;;) {
    const octet = randomBytes(1)[0] as number;
    if (![...used].some((address) => address.startsWith(`10.213.${octet}.`))) return octet;
  }
}

export function createTestLan(hostCount: number): TestLan {
  const octet = freeOctet();
  const tag = randomBytes(3).toString('hex');
  const bridge = `fmlan${tag}`;
  const prefix = `10.213.${octet}`;
  const hosts: LanHost[] = [];
  const namespaces: string[] = [];
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${prefix}.1/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    for (let i = 0; i < hostCount; i += 1) {
      const namespace = `fmns${tag}${i}`;
      const outside = `fmv${tag}${i}`;
      const mac = `02:13:${tag.slice(0, 2)}:${tag.slice(2, 4)}:${tag.slice(4, 6)}:${(i + 16).toString(16)}`;
      ip('netns', 'add', namespace);
      namespaces.push(namespace);
      ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace);
      ip('link', 'set', outside, 'master', bridge);
      ip('link', 'set', outside, 'up');
      ip('-n', namespace, 'link', 'set', 'eth0', 'address', mac);
      ip('-n', namespace, 'addr', 'add', `${prefix}.${i + 10}/24`, 'dev', 'eth0');
      ip('-n', namespace, 'link', 'set', 'eth0', 'up');
      ip('-n', namespace, 'link', 'set', 'lo', 'up');
      hosts.push({ namespace, ip: `${prefix}.${i + 10}`, mac });
    }
  } catch (error) {
    removeLan(bridge, namespaces);
    throw error;
  }
  return {
    subnet: `${prefix}.0/24`,
    gateway: `${prefix}.1`,
    broadcast: `${prefix}.255`,
    hosts,
    runIn: (host, script) => spawn('ip', ['netns', 'exec', host.namespace, process.execPath, '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] }),
    remove: () => removeLan(bridge, namespaces),
  };
}

function removeLan(bridge: string, namespaces: string[]): void {
  // Deleting a namespace deletes its end of each veth pair, and with it the other end.
  for (const namespace of namespaces) {
    try {
      ip('netns', 'delete', namespace);
    } catch {
      // already gone
    }
  }
  try {
    ip('link', 'delete', bridge);
  } catch {
    // already gone
  }
}

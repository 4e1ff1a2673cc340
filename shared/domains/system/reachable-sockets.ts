import type { ActionOutput } from '../../catalog/action.ts';
import type { openPorts } from './system-actions.ts';

type Socket = ActionOutput<typeof openPorts>['ports'][number];

/** A loopback address: only the host itself can reach what listens there. */
function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address === 'localhost';
}

/** The listening sockets other machines can reach, once each (the kernel lists some once per process). */
export function reachableSockets(sockets: readonly Socket[]): Socket[] {
  const seen = new Map<string, Socket>();
  for (const socket of sockets) if (!isLoopback(socket.address)) seen.set(`${socket.protocol} ${socket.address} ${socket.port}`, socket);
  return [...seen.values()];
}

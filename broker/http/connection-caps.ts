import type { Server } from 'node:net';
import { sourceKey } from '../limits/source-key.ts';

/**
 * Caps the connections a listener keeps open: `total` of them and
 * `perSource` from one source address (an IPv6 one by its /64). A connection
 * past either cap is closed at once, before anything it sends is read: the
 * client sees its connection closed and may try again once it has closed
 * others. Idle keep-alive connections count until they close. So one source
 * cannot take the descriptors every other client and the agents need.
 */
export function capConnections(server: Server, caps: { total: number; perSource: number }): void {
  // Node closes the connections past this itself, before 'connection' is emitted.
  server.maxConnections = caps.total;
  const open = new Map<string, number>();
  // Before the HTTP server's own listener, so a refused connection gets no parser.
  server.prependListener('connection', (socket) => {
    const source = sourceKey(socket.remoteAddress);
    const count = open.get(source) ?? 0;
    if (count >= caps.perSource) {
      socket.destroy();
      return;
    }
    open.set(source, count + 1);
    socket.once('close', () => {
      const left = (open.get(source) ?? 1) - 1;
      if (left > 0) open.set(source, left);
      else open.delete(source);
    });
  });
}

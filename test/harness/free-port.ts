import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports handed out below the kernel's ephemeral range: a port the kernel picks
 * for `listen(0)` or for the source of an outgoing connection can be taken by
 * another test's socket between the check and the server's own listen (CI saw
 * a broker fail to start that way). Each test worker draws from a slice of its
 * own, in turn, so two workers never hold the same port and one worker hands a
 * port out again only after going round its whole slice.
 */
const FIRST = 20_000;
const SLICE = 1_500;
const SLICES = Math.floor((ephemeralStart() - FIRST) / SLICE);
const slice = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? 0) % Math.max(SLICES, 1);
let next = Math.floor(Math.random() * SLICE);

function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

function listensFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port nothing listens on right now, on any address, for a server that must be started (and restarted) on a known port. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < SLICE; tries++) {
    const port = FIRST + slice * SLICE + (next++ % SLICE);
    if (await listensFree(port, '0.0.0.0')) return port;
  }
  throw new Error(`no free port between ${FIRST + slice * SLICE} and ${FIRST + (slice + 1) * SLICE - 1}`);
}

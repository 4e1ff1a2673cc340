import { once } from 'node:events';
import { Agent, request, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetError } from '../../shared/errors/fleet-error.ts';
import { closeHttp, type HttpLimits, listenHttp } from './listen-http.ts';
import { CLOSES_CONNECTION, readBody } from './read-body.ts';

/** Limits no case here reaches, unless it says otherwise. */
const LIMITS: HttpLimits = { maxConnections: 100, maxConnectionsPerSource: 100, headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, bodyTimeoutMs: 30_000 };

/** A raw connection from `from` (a loopback address of its own stands for another host), once it is connected. */
async function dial(port: number, from = '127.0.0.1'): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from });
  socket.on('error', () => {});
  await once(socket, 'connect');
  return socket;
}

/** Everything the server sends on a connection until it closes it. */
function readToClose(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (data: Buffer) => {
      text += data.toString();
    });
    socket.once('close', () => resolve(text));
  });
}

/** A GET through `agent` (keep-alive: the next request reuses the connection when the server lets it). */
function get(port: number, agent: Agent | false = false, from = '127.0.0.1'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent, localAddress: from }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A POST of `size` bytes through `agent`, its length told in Content-Length or
 * not (chunked); resolves with the status and Connection header, or the error
 * when the connection was cut before the answer was read.
 */
function post(port: number, agent: Agent, size: number, told: boolean): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent, headers: told ? { 'content-length': size } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(`${res.statusCode} ${res.headers.connection}`));
    });
    req.on('error', (error) => resolve(error.message));
    req.end(Buffer.alloc(size, 'x'));
  });
}

describe('the HTTP listeners (MCP, web console)', () => {
  let server: Server | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await closeHttp(server);
    server = undefined;
  });

  /** A server whose handler reads the body with `maxBytes`, answering 200 `read N` or the refusal, its connection closed. */
  async function start(limits: Partial<HttpLimits> = {}, maxBytes = 1024): Promise<number> {
    const resolved = { ...LIMITS, ...limits };
    server = await listenHttp(
      '127.0.0.1',
      0,
      resolved,
      async (req, res) => {
        try {
          const body = await readBody(req, { maxBytes, timeoutMs: resolved.bodyTimeoutMs });
          res.end(`read ${body.length}`);
        } catch (error) {
          const status = (error as FleetError).details?.httpStatus as number;
          res.writeHead(status, CLOSES_CONNECTION);
          res.end((error as FleetError).message);
        }
      },
      () => {},
    );
    return (server.address() as { port: number }).port;
  }

  it("closes at once a connection past its source's cap, while another source is still answered", async () => {
    const port = await start({ maxConnectionsPerSource: 2 });
    const held = [await dial(port, '127.0.0.2'), await dial(port, '127.0.0.2')];
    sockets.push(...held);
    const refused = await dial(port, '127.0.0.2');
    sockets.push(refused);
    expect(await readToClose(refused)).toBe('');
    expect(await get(port)).toEqual({ status: 200, body: 'read 0' });
    // A connection closed frees its place.
    held[0]?.destroy();
    await once(held[0] as Socket, 'close');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await get(port, false, '127.0.0.2')).toEqual({ status: 200, body: 'read 0' });
  });

  it('closes at once a connection past the total of the listener', async () => {
    const port = await start({ maxConnections: 2 });
    sockets.push(await dial(port, '127.0.0.2'), await dial(port, '127.0.0.3'));
    const refused = await dial(port, '127.0.0.4');
    sockets.push(refused);
    expect(await readToClose(refused)).toBe('');
  });

  it('answers 408 and closes a connection whose headers do not arrive in time', async () => {
    const port = await start({ headersTimeoutMs: 300 });
    const slow = await dial(port);
    sockets.push(slow);
    slow.write('GET / HTTP/1.1\r\nHost: x\r\n');
    expect(await readToClose(slow)).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('answers 408 and closes a connection whose body does not arrive within its clock', async () => {
    const port = await start({ bodyTimeoutMs: 300 });
    const slow = await dial(port);
    sockets.push(slow);
    slow.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nsome');
    const answer = await readToClose(slow);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/^connection: close$/im);
    expect(answer).toMatch(/did not arrive within 0.3 s/);
  });

  it('answers a body past the limit with 413 and closes its connection, so a keep-alive client sends its next request on a new one', async () => {
    const port = await start({}, 64 * 1024);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // Told by its Content-Length, or found while reading a chunked body.
      for (const told of [true, false]) {
        expect(await post(port, agent, 1024 * 1024, told)).toMatch(/^(413 close|.*(ECONNRESET|EPIPE|socket hang up).*)$/);
        expect(await get(port, agent)).toEqual({ status: 200, body: 'read 0' });
      }
      expect(await post(port, agent, 1000, true)).toBe('200 keep-alive');
    } finally {
      agent.destroy();
    }
  });
});

import { createServer, request } from 'node:http';
import type { Exchange } from '../../broker/mcp/http/exchange.ts';

/** What serveEdge() started: where it listens, and what stops it. */
export interface EdgeServer {
  /** http://127.0.0.1:PORT/ */
  url: URL;
  port: number;
  close(): Promise<void>;
}

/**
 * Edge steps served over real HTTP on loopback, in this process, so a step's
 * own test sends it real requests (fetch) and reads real answers. A request
 * no step answered is answered 418, so a test sees that it was handed on.
 */
export async function serveEdge(handle: (exchange: Exchange) => Promise<void>): Promise<EdgeServer> {
  const server = createServer((req, res) => {
    handle({ req, res, url: new URL(req.url ?? '/', 'http://localhost') })
      .then(() => {
        if (!res.headersSent) {
          res.writeHead(418, { 'content-type': 'text/plain' });
          res.end('handed on');
        }
      })
      .catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end((error as Error).message);
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An answer as a test reads it. */
export interface EdgeAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): unknown;
}

/**
 * One request through node:http, which sends the Host header it is given
 * (fetch sends the URL's), so a test can be a page on another name.
 */
export function sendTo(url: URL, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<EdgeAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

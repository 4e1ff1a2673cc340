import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

interface HealthSources {
  /** Readiness checks by name: undefined when the part is up, else why it is not. */
  readiness(): Record<string, string | undefined> | Promise<Record<string, string | undefined>>;
  /** What the operator chose to give up (a bus without credentials): said on /readyz without making it fail. */
  warnings?(): readonly string[];
  /** The Prometheus text exposition of the broker's metrics. */
  metrics(): string;
  /** The bearer token /metrics requires (--metrics-token-file), or undefined for none. */
  metricsToken: string | undefined;
  /** Told of each request whose /metrics token was wrong (the audit keeps them). */
  onTokenRefused(req: IncomingMessage, reason: string): void;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** Whether the request carries the bearer token; compared by hash, in constant time. */
function bearerMatches(req: IncomingMessage, token: string): boolean | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (!match) return undefined;
  return timingSafeEqual(sha256(match[1] ?? ''), sha256(token));
}

function send(req: IncomingMessage, res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Probes and scrapers only read: anything but GET and HEAD is refused. */
function readOnly(route: Route): Route {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' });
      res.end();
      return;
    }
    route(req, res);
  };
}

/**
 * The broker's unauthenticated routes beside /mcp, for orchestrators and
 * Prometheus: `/healthz` (the process serves HTTP), `/readyz` (200 when every
 * readiness check passes, 503 naming the ones that fail) and `/metrics`
 * (behind a bearer token when one is set). They carry counts and tool names,
 * never hosts' data or secrets. The server checks their Host header as it does
 * for /mcp.
 */
export function createHealthRoutes(sources: HealthSources): Record<string, Route> {
  return {
    '/healthz': readOnly((req, res) => send(req, res, 200, 'application/json', '{"status":"ok"}\n')),
    '/readyz': readOnly(async (req, res) => {
      let checks: Record<string, string | undefined>;
      try {
        checks = await sources.readiness();
      } catch (error) {
        checks = { readiness: (error as Error).message };
      }
      const failing = Object.values(checks).some((reason) => reason !== undefined);
      const warnings = sources.warnings?.() ?? [];
      const body = {
        ready: !failing,
        checks: Object.fromEntries(Object.entries(checks).map(([name, reason]) => [name, reason ?? 'ok'])),
        ...(warnings.length ? { warnings } : {}),
      };
      send(req, res, failing ? 503 : 200, 'application/json', `${JSON.stringify(body)}\n`);
    }),
    '/metrics': readOnly((req, res) => {
      if (sources.metricsToken !== undefined) {
        const matches = bearerMatches(req, sources.metricsToken);
        if (matches !== true) {
          if (matches === false) sources.onTokenRefused(req, 'the /metrics bearer token is wrong');
          res.writeHead(401, {
            'www-authenticate': `Bearer realm="fleetmesh-metrics"${matches === false ? ', error="invalid_token"' : ''}`,
            'cache-control': 'no-store',
          });
          res.end();
          return;
        }
      }
      send(req, res, 200, 'text/plain; version=0.0.4; charset=utf-8', sources.metrics());
    }),
  };
}

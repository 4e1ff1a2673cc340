import type { Logger } from '../../../shared/log/logger.ts';
import { hostAllowed, loopbackHosts } from '../../http/listen-http.ts';
import { ThrottledWarnings } from '../../limits/throttled-warnings.ts';
import type { EdgeStep } from './edge-chain.ts';
import type { Exchange } from './exchange.ts';
import { sendJson, sendJsonRpcError } from './json-answers.ts';

interface HostGuardOptions {
  /** Host header values accepted (host:port); `*` accepts any; none: loopback names at the port. */
  allowedHosts: readonly string[];
  /** Origin header values accepted; none: loopback origins at the port. A request without Origin is always accepted. */
  allowedOrigins: readonly string[];
  /** The port the listener took (known once it listens). */
  port: () => number;
  log: Logger;
}

const REFUSAL = 'Forbidden: the Host or Origin header is not allowed (DNS rebinding protection; see --mcp-allowed-hosts)';

/**
 * The first step of every path, authenticated or not: a request whose Host
 * or Origin header is not on the allow-lists is answered 403 (DNS rebinding:
 * a page on another site must not reach /mcp, /metrics or /readyz through a
 * name that resolves here). Refusals are logged, at most 20 lines at once and
 * 6 a minute.
 */
export function hostGuard(options: HostGuardOptions): EdgeStep<Exchange> {
  const refused = new ThrottledWarnings(options.log, { burst: 20, perMinute: 6 });
  const originAllowed = (origin: string | undefined) => {
    if (origin === undefined) return true;
    const allowed = options.allowedOrigins.length ? options.allowedOrigins : loopbackHosts(options.port()).map((h) => `http://${h}`);
    return allowed.includes('*') || allowed.some((a) => a.toLowerCase() === origin.toLowerCase());
  };
  return async (exchange, next) => {
    const { req, res, url } = exchange;
    if (hostAllowed(options.allowedHosts, options.port(), req.headers.host) && originAllowed(req.headers.origin)) return next(exchange);
    refused.warn('HTTP request refused: Host or Origin not allowed', { path: url.pathname, host: req.headers.host, origin: req.headers.origin });
    if (url.pathname === '/mcp') sendJsonRpcError(res, 403, -32000, REFUSAL);
    else sendJson(res, 403, { error: REFUSAL });
  };
}

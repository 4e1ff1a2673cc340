import type { Logger } from '../../../shared/log/logger.ts';
import type { Identity } from '../../auth/identities.ts';
import type { McpSession, McpSessionEra } from '../mcp-session.ts';
import type { McpExchange } from './exchange.ts';
import { iconOrigin } from './icon-origin.ts';
import { isListen } from './mcp-request-kind.ts';
import { ModernEndpoint } from './modern-endpoint.ts';
import { sendWebResponse, toWebRequest } from './web-exchange.ts';

interface ModernEndpointsOptions {
  createSession(identity: Identity, era: McpSessionEra, iconOrigin: string | undefined): McpSession;
  /** The public URL, when set: icon URLs are built on its origin rather than the request's. */
  publicUrl: string | undefined;
  log: Logger;
}

/**
 * The 2026-07-28 side of /mcp: one endpoint per identity that sent such a
 * request, made on its first, kept while used, and ended when idle (with no
 * listen stream open) or when its identity is revoked or expires.
 */
export class ModernEndpoints {
  private readonly endpoints = new Map<string, ModernEndpoint>();

  constructor(private readonly options: ModernEndpointsOptions) {}

  get size(): number {
    return this.endpoints.size;
  }

  sessions(): McpSession[] {
    return [...this.endpoints.values()].map((endpoint) => endpoint.session);
  }

  /** Serves a request the 2025-era step handed on; a listen stream keeps its endpoint in use until it closes. */
  readonly serve = async (exchange: McpExchange): Promise<void> => {
    const { req, res, body, parsed, identity, authInfo } = exchange;
    const aborted = new AbortController();
    res.once('close', () => aborted.abort());
    const request = toWebRequest(req, body, aborted.signal);
    const endpoint = this.of(identity);
    if (isListen(parsed)) {
      endpoint.listening += 1;
      res.once('close', () => {
        endpoint.listening -= 1;
      });
    }
    await sendWebResponse(res, await endpoint.serve(request, authInfo, parsed));
  };

  /** The endpoint of an identity, made on its first request. */
  private of(identity: Identity): ModernEndpoint {
    let endpoint = this.endpoints.get(identity.id);
    if (!endpoint) {
      const session = this.options.createSession(identity, 'modern', undefined);
      endpoint = new ModernEndpoint(session, identity.expiresAt, (url) => iconOrigin(this.options.publicUrl, url), this.options.log);
      this.endpoints.set(identity.id, endpoint);
    }
    endpoint.lastUsed = Date.now();
    endpoint.expiresAt = identity.expiresAt;
    return endpoint;
  }

  /** The identities whose endpoint's expiry, as last known, has passed. */
  expiredBy(nowMs: number): string[] {
    return [...this.endpoints].filter(([, endpoint]) => endpoint.expiresAt <= nowMs).map(([identityId]) => identityId);
  }

  /** Records when an identity expires, as its row now says (it may have been extended). */
  expires(identityId: string, expiresAt: number): void {
    const endpoint = this.endpoints.get(identityId);
    if (endpoint) endpoint.expiresAt = expiresAt;
  }

  /** Ends the endpoint of an identity revoked or expired. */
  end(identityId: string): void {
    const endpoint = this.endpoints.get(identityId);
    if (!endpoint) return;
    this.endpoints.delete(identityId);
    void endpoint.close().catch(() => {});
  }

  /** Ends the endpoints unused for `idleMs`; one with a listen stream open is in use. */
  closeIdle(nowMs: number, idleMs: number): void {
    for (const [identityId, endpoint] of this.endpoints) {
      if (endpoint.listening > 0) endpoint.lastUsed = nowMs;
      else if (nowMs - endpoint.lastUsed > idleMs) this.end(identityId);
    }
  }

  /** Ends every endpoint (the broker stops). */
  async close(): Promise<void> {
    const endpoints = [...this.endpoints.values()];
    this.endpoints.clear();
    await Promise.all(endpoints.map((endpoint) => endpoint.close().catch(() => {})));
  }
}

import { type AuthInfo, createMcpHandler, InMemoryServerEventBus, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { Logger } from '../../../shared/log/logger.ts';
import type { McpSession } from '../mcp-session.ts';
import { listenedResources } from './mcp-request-kind.ts';

/** The largest request body an endpoint takes. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Where one identity's 2026-07-28 requests are served: stateless requests
 * each get a fresh server from the identity's session (its icon URLs on the
 * origin `iconOrigin` gives for the request's URL), and its
 * `subscriptions/listen` streams hear only what that session publishes.
 */
export class ModernEndpoint {
  private readonly handler: McpHttpHandler;
  /** When it was last asked something; with no listen stream open, it ends once idle long enough. */
  lastUsed = Date.now();
  /** Its `subscriptions/listen` streams open now: while one is, the endpoint is in use. */
  listening = 0;

  constructor(
    readonly session: McpSession,
    /** When the identity expires, as its last request found it. */
    public expiresAt: number,
    iconOrigin: (requestUrl: string) => string,
    log: Logger,
  ) {
    const bus = new InMemoryServerEventBus();
    this.handler = createMcpHandler((context) => session.createServer(context.requestInfo && iconOrigin(context.requestInfo.url)), {
      legacy: 'reject',
      bus,
      maxRequestBodySize: MAX_BODY_BYTES,
      onerror: (error) => log.debug('MCP request refused', { error: error.message }),
    });
    session.attachBus(bus);
  }

  /**
   * Answers one request (`parsed`: its body, already read). A listen stream
   * names its resources without subscribing: the session watches those its
   * identity may read.
   */
  async serve(request: Request, authInfo: AuthInfo, parsed: unknown): Promise<Response> {
    const uris = listenedResources(parsed);
    if (uris.length) await this.session.listen(uris);
    return this.handler.fetch(request, { authInfo, ...(parsed === undefined ? {} : { parsedBody: parsed }) });
  }

  /** Ends its streams; it answers nothing more. */
  close(): Promise<void> {
    return this.handler.close();
  }
}

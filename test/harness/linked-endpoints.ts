import { verifyBearerToken } from '../../broker/auth/identities.ts';
import { bearerAuth } from '../../broker/mcp/http/bearer-auth.ts';
import { EdgeChain } from '../../broker/mcp/http/edge-chain.ts';
import type { Exchange } from '../../broker/mcp/http/exchange.ts';
import { LegacyEndpoint } from '../../broker/mcp/http/legacy-endpoint.ts';
import { MAX_BODY_BYTES } from '../../broker/mcp/http/modern-endpoint.ts';
import { ModernEndpoints } from '../../broker/mcp/http/modern-endpoints.ts';
import { requestBody } from '../../broker/mcp/http/request-body.ts';
import { SessionSweeps } from '../../broker/mcp/http/session-sweeps.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { serveEdge } from './edge-server.ts';
import type { LinkedFleet } from './linked-fleet.ts';

/** Both eras' endpoints of a linked fleet, served at `url`, with the sweeps that end their sessions. */
export interface LinkedEndpoints {
  url: URL;
  legacy: LegacyEndpoint;
  modern: ModernEndpoints;
  /** Not started: a test runs each round itself, at the time it chooses. */
  sweeps: SessionSweeps;
  close(): Promise<void>;
}

/**
 * The endpoints and sweeps of the MCP edge on a linked fleet, behind only
 * the steps they need (bearer auth, the body), served over HTTP on loopback
 * in this process: what a test of the sessions' lives holds directly.
 */
export async function serveEndpoints(fleet: LinkedFleet, options: { idleMs: number; perIdentity?: number }): Promise<LinkedEndpoints> {
  const createSession: ConstructorParameters<typeof LegacyEndpoint>[0]['createSession'] = (identity, era) => fleet.mcpSession(identity, { era });
  const limits = { perIdentity: options.perIdentity ?? 64, idleMs: options.idleMs };
  const legacy = new LegacyEndpoint({ createSession, publicUrl: undefined, limits, store: fleet.store, log: silentLogger });
  const modern = new ModernEndpoints({ createSession, publicUrl: undefined, log: silentLogger });
  const sweeps = new SessionSweeps({ store: fleet.store, legacy, modern, idleMs: options.idleMs });
  const server = await serveEdge(
    EdgeChain.start<Exchange>()
      .use(
        bearerAuth({
          verify: (token) => verifyBearerToken(fleet.store, token),
          touch: async () => {},
          refusals: { record: async () => {} },
          resourceUrl: () => 'http://127.0.0.1/mcp',
        }),
      )
      .use(requestBody({ maxBytes: MAX_BODY_BYTES, timeoutMs: 10_000 }))
      .use(legacy.step)
      .end(modern.serve),
  );
  return {
    url: new URL('/mcp', server.url),
    legacy,
    modern,
    sweeps,
    close: async () => {
      await legacy.close();
      await modern.close();
      await server.close();
    },
  };
}

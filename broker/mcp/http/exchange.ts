import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Identity } from '../../auth/identities.ts';

/** One HTTP request on its way through the edge's steps, and the response that answers it. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The request's path and query (its origin is not the request's: read the Host header for that). */
  readonly url: URL;
}

/** A request to /mcp whose bearer token proved an identity (bearer-auth.ts). */
export interface ProvenExchange extends Exchange {
  readonly identity: Identity;
  /** The identity as the SDK's handlers see it (`ctx.http.authInfo`); the token itself is not passed on. */
  readonly authInfo: AuthInfo;
}

/** A proven request whose body, if it is a POST, was read whole and parsed (request-body.ts). */
export interface McpExchange extends ProvenExchange {
  readonly body: Buffer | undefined;
  /** The body as JSON; undefined when there is none or it is not JSON. */
  readonly parsed: unknown;
}

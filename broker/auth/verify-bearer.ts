import type { BrokerStore } from '../store/broker-store.ts';
import { type Identity, parseIdentityToken, TokenRefused, verifyBearerToken } from './identities.ts';
import type { ResourceServer } from './oauth/resource-server.ts';

/**
 * The identity any bearer token proves, whichever kind it is: an identity
 * token (`fmc1.…`) from the store, or an OAuth access token through the
 * resource server when OAuth is on. Both end as one Identity before anything
 * else runs, and everything after is the same for both.
 */
export function verifyBearer(store: BrokerStore, oauth: ResourceServer | undefined, token: string): Promise<Identity> {
  if (parseIdentityToken(token) || !oauth) return verifyBearerToken(store, token);
  if (token.startsWith('fmc1.')) return Promise.reject(new TokenRefused('the token is malformed'));
  return oauth.identityOf(token);
}

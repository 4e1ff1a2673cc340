import type { CryptoKey, KeyObject } from 'jose';
import { createLocalJWKSet, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { FleetError } from '../../../shared/errors/fleet-error.ts';

/** How the keys of an issuer are fetched, and how long what was fetched is believed. */
export interface JwksCacheOptions {
  /** The issuer's current key set (fetched from its jwks_uri, or read from the store for the built-in server). */
  fetch(): Promise<JSONWebKeySet>;
  /** Keys older than this are fetched again at the next token: a key the issuer removed stops working within it. */
  maxAgeMs: number;
  /** A key id not in the set fetches it again, at most once per this long: tokens naming made-up ids cannot make the broker hammer the issuer. */
  cooldownMs: number;
}

/** The issuer's keys are not to be had: tokens cannot be checked, which is no fault of theirs. */
function unreachable(reason: string): FleetError {
  return new FleetError('unavailable', `the OAuth issuer's signing keys could not be fetched (${reason})`, {
    hint: 'Check that the issuer answers from the broker (its jwks_uri); tokens are checked again once it does.',
  });
}

/** The most keys one set may hold: a set past it is refused whole (an issuer publishes a handful). */
const MAX_KEYS = 100;

/**
 * An issuer's signing keys, kept between tokens. A token naming a key id the
 * set lacks fetches the set again (the issuer rotated); the whole set is
 * fetched again once it is older than its maximum age, so a key the issuer
 * removed is refused from then on. Fetches are at most one per cooldown,
 * whatever the tokens say, and concurrent tokens share one. While the issuer
 * does not answer, the keys fetched last go on being used.
 */
export class JwksCache {
  private keys: ReturnType<typeof createLocalJWKSet> | undefined;
  private kids = new Set<string>();
  private fetchedMs = 0;
  private triedMs = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | undefined;

  constructor(private readonly options: JwksCacheOptions) {}

  /** The key that should have signed a token with this header; throws jose's own errors when there is none. */
  readonly key = async (header: JWSHeaderParameters): Promise<CryptoKey | KeyObject> => {
    const now = Date.now();
    const wanted = !this.keys || now - this.fetchedMs > this.options.maxAgeMs || (header.kid !== undefined && !this.kids.has(header.kid));
    if (wanted && (this.pending || now - this.triedMs >= this.options.cooldownMs)) {
      try {
        await this.refresh();
      } catch (error) {
        if (!this.keys) throw unreachable((error as Error).message);
      }
    }
    if (!this.keys) throw unreachable('it was tried less than a cooldown ago');
    return this.keys(header);
  };

  private refresh(): Promise<void> {
    this.triedMs = Date.now();
    this.pending ??= (async () => {
      try {
        const set = await this.options.fetch();
        if (!Array.isArray(set.keys) || set.keys.length > MAX_KEYS) throw new Error(`the issuer's key set is not a list of at most ${MAX_KEYS} keys`);
        this.keys = createLocalJWKSet(set);
        this.kids = new Set(set.keys.flatMap((key) => (typeof key.kid === 'string' ? [key.kid] : [])));
        this.fetchedMs = Date.now();
      } finally {
        this.pending = undefined;
      }
    })();
    return this.pending;
  }
}

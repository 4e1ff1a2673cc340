/** At most this many keys to one statement (as many parameters). */
const MAX_KEYS = 500;

/**
 * Reads of one row by key that many callers ask for in the same turn of the
 * event loop, made as one statement for all their keys. A broker taking back
 * thousands of agents read each one's certificate and row on its own: every
 * statement waits for one of the store's connections and then for a turn of
 * the loop to hear its answer, and with the loop's turns seconds long under
 * TLS handshakes, a returning fleet was authenticated ten statements a turn
 * while their streams waited. Not for reads inside a transaction: the batch
 * runs on its own.
 */
export class CoalescedReads<K, V> {
  private pending = new Map<K, { resolve: (value: V | undefined) => void; reject: (error: unknown) => void }[]>();
  private scheduled = false;

  /** `readMany` answers the keys it finds; a key it leaves out reads as undefined. */
  constructor(private readonly readMany: (keys: K[]) => Promise<ReadonlyMap<K, V>>) {}

  read(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        // After the loop's poll phase: every stream whose first call came in this turn asks first.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = new Map();
    const keys = [...batch.keys()];
    for (let start = 0; start < keys.length; start += MAX_KEYS) {
      const chunk = keys.slice(start, start + MAX_KEYS);
      this.readMany(chunk).then(
        (rows) => {
          for (const key of chunk) for (const waiting of batch.get(key) ?? []) waiting.resolve(rows.get(key));
        },
        (error: unknown) => {
          for (const key of chunk) for (const waiting of batch.get(key) ?? []) waiting.reject(error);
        },
      );
    }
  }
}

/**
 * Something a domain's indexer saw in what agents report that a person should
 * hear of (a container's restart, a host crossing a threshold), in words read
 * on a phone. The index tells every notice to whoever sends them out (the
 * notify domain's channels); fleet text in it is quoted as such.
 */
export interface Notice {
  /** What it is about, as the domain names it (`incident`, `alert`…); `offline` and `test` are the notifier's own. */
  event: string;
  severity: 'info' | 'warning' | 'critical';
  title: string;
  text: string;
  host?: string;
  /** The same key within the repeat window is sent once. */
  key: string;
  time_unix_ms: number;
  /** The structured facts behind it (the incident, the crossing), for the webhook channel. */
  details?: unknown;
}

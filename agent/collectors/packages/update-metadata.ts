/** An installed package a newer version of which the host's package metadata offers. */
export interface PendingUpdate {
  name: string;
  installed: string;
  candidate: string;
  security: boolean;
  architecture: string | null;
}

/**
 * What the metadata a host's package manager already holds says of its
 * installed packages (apt's lists, dnf's or yum's cached repodata, apk's
 * cached indexes): the updates, when the metadata was last refreshed, and
 * whether it can tell a security update from another.
 */
export interface UpdateMetadata {
  updates: PendingUpdate[];
  /** The newest metadata file's modification time (the last refresh), unix ms; null without any. */
  refreshedUnixMs: number | null;
  /** The metadata files read: none means no update is known, which the answer says. */
  sources: number;
  /** Whether the metadata marks security updates (apk's never does; rpm's only with updateinfo). */
  securityMarked: boolean;
  /** Where the metadata was looked for, and what refreshes it on the host: for the answer's error when there is none. */
  lookedIn: string;
  refresh: string;
  /** Metadata there that could not be read, and why (a compression this Node lacks, a damaged file), named in the answer's errors. */
  unreadable: { path: string; why: string }[];
}

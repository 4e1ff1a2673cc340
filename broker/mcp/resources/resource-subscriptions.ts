import { createHash } from 'node:crypto';

/** How long changes gather before subscribers hear of them: a burst of reports is one notification. */
const DEBOUNCE_MS = 500;

/** What a subscribed resource's content is now: its text, or undefined once it is gone or hidden. */
type Reader = (uri: string) => Promise<string | undefined>;

interface Sender {
  updated(uri: string): Promise<void>;
  listChanged(): Promise<void>;
}

/**
 * Whether a session's resource list changed is known only by listing every
 * resource its identity may read: a second of the main thread at 10,000 hosts,
 * and every session watching asks after each change. The sessions' list checks
 * take turns, each followed by a pause of this many times its own length, so
 * together they hold at most a fifth of the broker's main thread, whatever the
 * fleet's size and the number of sessions: at scale a list_changed comes later,
 * never lost, while agents' heartbeats and calls go on being served.
 */
const LIST_CHECK_PAUSE = 4;
let listChecks: Promise<unknown> = Promise.resolve();
interface ListSeen {
  digest: string;
  /** When the making of the list began (performance.now()): it shows every change told before. */
  at: number;
}

/**
 * The last list made for each way of seeing the fleet (sessions whose identities
 * may read the same things share one), and when its making began: a session
 * whose oldest change not yet looked at came before that takes it instead of
 * making its own (and looks again if it was told of changes since).
 */
const recentLists = new Map<string, ListSeen>();

/** The digest of a session's list, made in turn, or taken from a list of the same view begun after `since`. */
function listInTurn(view: string | undefined, since: number, make: () => string): Promise<ListSeen> {
  const turn = listChecks.then(() => {
    const recent = view === undefined ? undefined : recentLists.get(view);
    if (recent && recent.at > since) return { seen: recent, ms: 0 };
    const seen: ListSeen = { at: performance.now(), digest: '' };
    seen.digest = make();
    if (view !== undefined) {
      // Views are few (one per kind of identity): a broker that saw many keeps only the newest.
      if (recentLists.size >= 256 && !recentLists.has(view)) recentLists.clear();
      recentLists.set(view, seen);
    }
    return { seen, ms: performance.now() - seen.at };
  });
  listChecks = turn.then(
    ({ ms }) => (ms * LIST_CHECK_PAUSE >= 2 ? new Promise((resolve) => setTimeout(resolve, ms * LIST_CHECK_PAUSE).unref()) : undefined),
    () => undefined,
  );
  return turn.then(({ seen }) => seen);
}

const digest = (text: string | undefined) => (text === undefined ? 'gone' : createHash('sha256').update(text).digest('base64'));

/**
 * One session's subscriptions. A change of the fleet the identity may see
 * (the caller decides that) re-reads each subscribed resource as the
 * identity, after a short debounce, and notifies the ones whose content
 * changed; the set of resources it may read is compared the same way for
 * list_changed. Content read as the identity can only say what the identity
 * may see, so no notification speaks of anything hidden.
 */
export class ResourceSubscriptions {
  /** Each subscribed URI with its content's hash when last told (or subscribed). */
  private readonly subscribed = new Map<string, string>();
  /** Subscribed URIs whose content an agent answers (logs, history): told on any visible change of their group, not re-read. */
  private readonly live = new Set<string>();
  /** The digest of the list last looked at: the first is made in turn after the session opens, not while it opens. */
  private listDigest = '';
  /** Resolves with when the first list began (performance.now()). */
  private readonly firstList: Promise<number>;
  private timer: NodeJS.Timeout | undefined;
  /** A flush runs (it may wait its turn for the list check): changes meanwhile make one more flush after it, not one each. */
  private flushing = false;
  private changedSince = false;
  /**
   * When the session was last told of a change that may change its list, and
   * the oldest such change no list it looked at shows yet (performance.now());
   * none since the last list, and a flush re-reads subscriptions only.
   */
  private newestChange = performance.now();
  private oldestUnseen: number | undefined;
  private pending = new Set<string>();

  constructor(
    private readonly read: Reader,
    private readonly listed: () => string[],
    private readonly send: Sender,
    /** Runs with every debounced change, for what else follows the fleet (prompts offered). */
    private readonly onChange: () => void = () => {},
    /** Names what the identity may see (its level, grants, tools, surface): sessions with the same name share their list checks. */
    private readonly viewKey?: () => string,
  ) {
    // At 10,000 hosts a list is a second of the main thread: opening a session
    // waits for it no more than a change does (a list of the same view begun
    // after the session opened serves it as well).
    this.firstList = listInTurn(viewKey?.(), performance.now(), () => digest(listed().join('\n'))).then(
      ({ digest, at }) => {
        this.listDigest = digest;
        return at;
      },
      // No list to count from: the first change is told as a change of the list.
      () => Number.POSITIVE_INFINITY,
    );
  }

  /** Subscribes to a resource just read as the identity (its text is where changes count from). */
  subscribe(uri: string, live: boolean, text: string): void {
    if (live) this.live.add(uri);
    this.subscribed.set(uri, digest(text));
  }

  unsubscribe(uri: string): void {
    this.subscribed.delete(uri);
    this.live.delete(uri);
  }

  clear(): void {
    this.subscribed.clear();
    this.live.clear();
  }

  has(uri: string): boolean {
    return this.subscribed.has(uri);
  }

  uris(): string[] {
    return [...this.subscribed.keys()];
  }

  /**
   * Something the identity may see changed; `liveScope` (such as a cluster's
   * URIs) says which agent-answered subscriptions it touches, and `listed:
   * false` that the things listed stayed the same.
   */
  changed(liveScope?: (uri: string) => boolean, listed = true): void {
    if (listed) {
      this.newestChange = performance.now();
      this.oldestUnseen ??= this.newestChange;
    }
    if (liveScope) for (const uri of this.live) if (liveScope(uri)) this.pending.add(uri);
    this.schedule();
  }

  private schedule(): void {
    if (this.flushing) {
      this.changedSince = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), DEBOUNCE_MS);
    this.timer.unref();
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    this.flushing = true;
    try {
      await this.tell();
    } finally {
      this.flushing = false;
      if (this.changedSince) {
        this.changedSince = false;
        this.schedule();
      }
    }
  }

  private async tell(): Promise<void> {
    const newest = this.newestChange;
    const since = this.oldestUnseen;
    this.oldestUnseen = undefined;
    const live = [...this.pending];
    this.pending.clear();
    for (const uri of live) if (this.live.has(uri)) await this.send.updated(uri).catch(() => {});
    for (const [uri, before] of this.subscribed) {
      if (this.live.has(uri)) continue;
      const now = digest(await this.read(uri).catch(() => undefined));
      if (now === before || !this.subscribed.has(uri)) continue;
      this.subscribed.set(uri, now);
      await this.send.updated(uri).catch(() => {});
    }
    if (since !== undefined) await this.lookAtList(since, newest);
    this.onChange();
  }

  /** Makes the list (or takes one of the same view begun after `since`), and tells list_changed when it is not what was seen. */
  private async lookAtList(since: number, newest: number): Promise<void> {
    // A change told before the first list began may be in it and not in what the client listed: it is told as a change of the list.
    const beforeFirst = (await this.firstList) > since;
    const list = await listInTurn(this.viewKey?.(), since, () => digest(this.listed().join('\n')));
    if (list.at < newest) {
      // A shared list begun between this session's changes: look again for the later ones.
      this.oldestUnseen ??= newest;
      this.changedSince = true;
    }
    if (list.digest !== this.listDigest || beforeFirst) {
      this.listDigest = list.digest;
      await this.send.listChanged().catch(() => {});
    }
  }
}

import { afterEach, describe, expect, it, vi } from 'vitest';
import { ResourceSubscriptions } from './resource-subscriptions.ts';

describe("a session's subscriptions", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup() {
    vi.useFakeTimers();
    const contents = new Map<string, string | undefined>([['fleet://a', 'one']]);
    let listed = ['fleet://a'];
    const sent: string[] = [];
    const subscriptions = new ResourceSubscriptions(
      async (uri) => contents.get(uri),
      () => listed,
      {
        updated: async (uri) => {
          sent.push(`updated ${uri}`);
        },
        listChanged: async () => {
          sent.push('list_changed');
        },
      },
    );
    return { subscriptions, contents, sent, setList: (uris: string[]) => (listed = uris) };
  }

  it('tells a subscriber once per burst of changes, and only when what it reads changed', async () => {
    const { subscriptions, contents, sent } = setup();
    subscriptions.subscribe('fleet://a', false, 'one');
    subscriptions.changed();
    await vi.runAllTimersAsync();
    expect(sent).toEqual([]);
    contents.set('fleet://a', 'two');
    subscriptions.changed();
    subscriptions.changed();
    await vi.runAllTimersAsync();
    expect(sent).toEqual(['updated fleet://a']);
    contents.set('fleet://a', undefined);
    subscriptions.changed();
    await vi.runAllTimersAsync();
    expect(sent).toEqual(['updated fleet://a', 'updated fleet://a']);
  });

  it('tells list_changed when the set of readable resources changes', async () => {
    const { subscriptions, sent, setList } = setup();
    subscriptions.changed();
    await vi.runAllTimersAsync();
    expect(sent).toEqual([]);
    setList(['fleet://a', 'fleet://b']);
    subscriptions.changed();
    await vi.runAllTimersAsync();
    expect(sent).toEqual(['list_changed']);
  });

  it('tells agent-answered subscriptions on a change in their scope without re-reading them, and forgets an unsubscribed one', async () => {
    const { subscriptions, sent } = setup();
    subscriptions.subscribe('fleet://swarms/prod/history', true, '{}');
    subscriptions.changed((uri) => uri.startsWith('fleet://swarms/lab/'));
    await vi.runAllTimersAsync();
    expect(sent).toEqual([]);
    subscriptions.changed((uri) => uri.startsWith('fleet://swarms/prod/'));
    await vi.runAllTimersAsync();
    expect(sent).toEqual(['updated fleet://swarms/prod/history']);
    subscriptions.unsubscribe('fleet://swarms/prod/history');
    subscriptions.changed((uri) => uri.startsWith('fleet://swarms/prod/'));
    await vi.runAllTimersAsync();
    expect(sent).toHaveLength(1);
  });

  it('lets many sessions check their lists in turn, each check followed by a pause four times its length', async () => {
    // The clock is fake; the thread's time (performance.now) that a check's length is measured by is not.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const starts: number[] = [];
    const sessions = [0, 1, 2].map(
      (n) =>
        new ResourceSubscriptions(
          async () => undefined,
          () => {
            starts.push(Date.now());
            // A list that takes 20 ms of the thread to make, as a large fleet's does.
            const until = performance.now() + 20;
            while (performance.now() < until);
            return [`fleet://${n}`, `fleet://more-${starts.length}`];
          },
          { updated: async () => {}, listChanged: async () => {} },
        ),
    );
    // Each session's first list is made in turn after it opens.
    await vi.runAllTimersAsync();
    expect(starts).toHaveLength(3);
    starts.length = 0;
    for (const session of sessions) session.changed();
    await vi.runAllTimersAsync();
    expect(starts).toHaveLength(3);
    const gaps = starts.slice(1).map((at, i) => at - (starts[i] as number));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(80);
  });

  it('makes one list for sessions that see the fleet alike, and another for a session told of a change after it began', async () => {
    // The thread's time is real: a list begun after a session opened is later than its opening.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const made: string[] = [];
    let uris = ['fleet://a'];
    const session = (name: string, view: string) =>
      new ResourceSubscriptions(
        async () => undefined,
        () => {
          made.push(name);
          return uris;
        },
        { updated: async () => {}, listChanged: async () => {} },
        () => {},
        () => view,
      );
    const [alike1, alike2, other] = [session('alike-1', 'level 1'), session('alike-2', 'level 1'), session('other', 'level 3')];
    // The first lists too: one for each view.
    await vi.runAllTimersAsync();
    expect(made).toEqual(['alike-1', 'other']);
    made.length = 0;
    uris = ['fleet://a', 'fleet://b'];
    for (const s of [alike1, alike2, other]) s.changed();
    await vi.runAllTimersAsync();
    expect(made.sort()).toEqual(['alike-1', 'other']);
    made.length = 0;
    alike1.changed();
    await vi.runAllTimersAsync();
    alike2.changed();
    await vi.runAllTimersAsync();
    expect(made).toEqual(['alike-1', 'alike-2']);
  });

  it('looks again when a list it shared began before a later change it was told of', async () => {
    vi.useFakeTimers();
    let uris = ['fleet://a'];
    const told: string[] = [];
    const session = (name: string) =>
      new ResourceSubscriptions(
        async () => undefined,
        () => uris,
        { updated: async () => {}, listChanged: async () => void told.push(name) },
        () => {},
        () => 'same view',
      );
    const [early, late] = [session('early'), session('late')];
    await vi.runAllTimersAsync();
    uris = ['fleet://a', 'fleet://b'];
    early.changed();
    await vi.advanceTimersByTimeAsync(300);
    late.changed();
    // The early session's list is made 500 ms after its change; the late session is told of one more after that.
    await vi.advanceTimersByTimeAsync(300);
    uris = ['fleet://a', 'fleet://b', 'fleet://c'];
    late.changed();
    await vi.runAllTimersAsync();
    expect(told).toEqual(['early', 'late', 'late']);
  });

  it('makes the first list after the session opens, and tells a change that came before it as a change of the list', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    let uris = ['fleet://a'];
    let lists = 0;
    const told: string[] = [];
    const subscriptions = new ResourceSubscriptions(
      async () => undefined,
      () => {
        lists++;
        return uris;
      },
      { updated: async () => {}, listChanged: async () => void told.push('list_changed') },
    );
    // Opening the session made no list.
    expect(lists).toBe(0);
    // A change before the first list is made: the client may have listed before it, so it is told.
    uris = ['fleet://a', 'fleet://b'];
    subscriptions.changed();
    await vi.runAllTimersAsync();
    expect(lists).toBe(2);
    expect(told).toEqual(['list_changed']);
    // After that only a real change of the list is told.
    subscriptions.changed();
    await vi.runAllTimersAsync();
    expect(told).toEqual(['list_changed']);
    uris = ['fleet://a'];
    subscriptions.changed();
    await vi.runAllTimersAsync();
    expect(told).toEqual(['list_changed', 'list_changed']);
  });

  it('re-reads subscriptions without making the list again when the things listed stayed the same', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const contents = new Map([['fleet://a', 'running']]);
    let lists = 0;
    const told: string[] = [];
    const subscriptions = new ResourceSubscriptions(
      async (uri) => contents.get(uri),
      () => {
        lists++;
        return ['fleet://a'];
      },
      { updated: async (uri) => void told.push(`updated ${uri}`), listChanged: async () => void told.push('list_changed') },
    );
    await vi.runAllTimersAsync();
    expect(lists).toBe(1);
    subscriptions.subscribe('fleet://a', false, 'running');
    // A container stopped: its resource reads otherwise, and the list is what it was.
    contents.set('fleet://a', 'exited');
    subscriptions.changed(undefined, false);
    await vi.runAllTimersAsync();
    expect(told).toEqual(['updated fleet://a']);
    expect(lists).toBe(1);
    // A change that may change the list still makes it.
    subscriptions.changed();
    await vi.runAllTimersAsync();
    expect(lists).toBe(2);
    expect(told).toEqual(['updated fleet://a']);
  });
});

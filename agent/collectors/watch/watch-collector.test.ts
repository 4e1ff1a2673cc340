import { afterEach, describe, expect, it } from 'vitest';
import { watchAdd, watchCheck, watchHistory, watchList, watchRemove } from '../../../shared/domains/watch/watch-actions.ts';
import type { Incident } from '../../../shared/domains/watch/watch-incident.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import type { FakeContainer } from '../../../test/harness/fake-container.ts';
import { FakeEngine } from '../../../test/harness/fake-engine.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import { waitFor } from '../../../test/harness/wait.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { WatchCollector } from './watch-collector.ts';
import { watchPlugin } from './watch-plugin.ts';

const T0 = Date.parse('2026-11-30T10:00:00.000Z');
const at = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();

/** The plug-in's collector, without the wait for a new run's first log lines: the fake's lines are there at once. */
const withoutLogWait: CollectorPlugin<WatchCollector>['create'] = (context) =>
  new WatchCollector({ docker: context.engine, dataDir: context.options.dataDir, log: context.log, report: context.hooks.report, afterLogsMs: 0 });

/**
 * A restart as the engine goes through it: the run that began at T0 writes a
 * line and dies (killed for memory), and a new run starts 30 s after T0 and
 * writes its first line. The times are set, not taken from the clock, so which
 * line belongs to which run never depends on how fast the test runs.
 */
function crashAndRestart(engine: FakeEngine, container: FakeContainer): void {
  engine.writeLog(container, { stream: 'stderr', text: 'fatal: out of memory', at: at(10_000) });
  engine.exit(container, 137, true);
  container.finishedAt = at(20_000);
  container.restartCount += 1;
  engine.run(container);
  container.startedAt = at(30_000);
  engine.writeLog(container, { stream: 'stdout', text: 'starting again', at: at(31_000) });
}

describe('the watch collector on a fake engine', () => {
  const running: CollectorCalls<WatchCollector>[] = [];
  const temps: { remove(): void }[] = [];
  afterEach(async () => {
    for (const calls of running.splice(0)) await calls.stop();
    for (const temp of temps.splice(0)) temp.remove();
  });

  function watchesOn(
    engine: FakeEngine,
    create: CollectorPlugin<WatchCollector>['create'] = watchPlugin.create,
    dataDir?: string,
  ): CollectorCalls<WatchCollector> {
    const calls = new CollectorCalls(create, engine.client, dataDir ? { dataDir } : {});
    running.push(calls);
    return calls;
  }

  it('turns a restart of a watched container into an incident with how its run ended and the lines around it, and reports it', async () => {
    const engine = new FakeEngine();
    const api = engine.addContainer('api', { startedAt: at(0), image: 'api:3' });
    const calls = watchesOn(engine, withoutLogWait);
    await calls.collector.start();
    expect((await calls.call(watchAdd, { container: 'api' })).payload).toEqual({ container: 'api', runner: 'docker', added: true, watching: 1 });

    crashAndRestart(engine, api);
    const [incident] = await waitFor(() => (calls.reportsOf('watch_incident').length ? calls.reportsOf<Incident>('watch_incident') : undefined));
    expect(incident).toMatchObject({
      container: 'api',
      image: 'api:3',
      exit_code: 137,
      oom_killed: true,
      restart_count: 1,
      previous_start_unix_ms: T0,
      current_start_unix_ms: T0 + 30_000,
      flapping: false,
      logs_before: [{ stream: 'stderr', text: 'fatal: out of memory' }],
      logs_after: [{ stream: 'stdout', text: 'starting again' }],
    });
    expect(incident?.analysis).toMatch(/^killed for running out of memory \(OOM\)/);
    expect((await calls.call(watchHistory, { container: 'api' })).payload?.incidents.map((i) => i.id)).toEqual([incident?.id]);
    expect((await calls.call(watchList, {})).payload?.watches).toEqual([
      expect.objectContaining({ container: 'api', status: 'restarted', incidents: 1, restart_count: 1 }),
    ]);
  });

  it('records, once it is back, a restart that happened while the agent was away', async () => {
    const dataDir = makeTempDir('fm-watch-');
    temps.push(dataDir);
    const engine = new FakeEngine();
    const api = engine.addContainer('api', { startedAt: at(0) });
    const before = watchesOn(engine, watchPlugin.create, dataDir.path);
    await before.call(watchAdd, { container: 'api' });
    await before.collector.stop();

    api.restartCount += 1;
    api.startedAt = at(60_000);
    const after = watchesOn(engine, watchPlugin.create, dataDir.path);
    await after.collector.start();
    const [incident] = await waitFor(() => (after.reportsOf('watch_incident').length ? after.reportsOf<Incident>('watch_incident') : undefined));
    expect(incident).toMatchObject({ container: 'api', exit_code: null, previous_start_unix_ms: T0, current_start_unix_ms: T0 + 60_000 });
    expect(incident?.analysis).toMatch(/the end of the previous run was not seen/);
    const check = await after.call(watchCheck, {});
    expect(check.payload?.targets).toEqual([expect.objectContaining({ container: 'api', incidents: 1 })]);
  });

  it('says of each target whether it is healthy, down, missing, or could not be read, and never claims healthy without looking', async () => {
    const engine = new FakeEngine();
    engine.addContainer('web');
    engine.addContainer('worker', { state: 'exited', exitCode: 3, oomKilled: true });
    const calls = watchesOn(engine);
    for (const container of ['web', 'worker', 'gone']) await calls.call(watchAdd, { container });
    await calls.call(watchAdd, { container: 'nginx', runner: 'systemd' });

    const statuses = async () => Object.fromEntries((await calls.call(watchList, {})).payload?.watches.map((w) => [w.container, [w.status, w.reason]]) ?? []);
    expect(await statuses()).toEqual({
      web: ['healthy', undefined],
      worker: ['down', 'exited, exit code 3, OOM-killed'],
      gone: ['missing', 'no container has this name on this host'],
      nginx: ['skipped', 'this agent cannot read systemd units, so the state is unknown'],
    });

    engine.stopEngine();
    expect((await statuses()).web).toEqual(['skipped', expect.stringMatching(/^the Docker engine did not answer: connect ECONNREFUSED/)]);
    expect((await calls.call(watchRemove, { container: 'gone' })).payload).toEqual({ container: 'gone', removed: true, watching: 3 });
  });
});

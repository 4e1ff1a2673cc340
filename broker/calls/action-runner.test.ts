import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAction } from '../../shared/catalog/action.ts';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { dockerStop } from '../../shared/domains/docker/docker-actions.ts';
import { fleetStatus } from '../../shared/domains/fleet/fleet-actions.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { type LinkedAction, type LinkedFleet, startLinkedFleet } from '../../test/harness/linked-fleet.ts';
import { recordingStop } from '../../test/harness/recording-stop.ts';

/** agent_info as a host answers it, with its name. */
function info(name: string): LinkedAction {
  return {
    action: agentInfo,
    handler: async () => ({
      payload: {
        agent_id: `agent-${name}`,
        name,
        version: 'linked',
        protocol_version: 1,
        uptime_s: 1,
        started_at_unix_ms: 0,
        collectors: [],
        labels: {},
        facts: {},
        sample: null,
        certificate_not_after_unix_ms: 0,
      },
    }),
  };
}

const stop = recordingStop;

describe('ActionRunner.run over a linked fleet', () => {
  let fleet: LinkedFleet;
  const stopped: string[] = [];
  beforeEach(async () => {
    stopped.length = 0;
    fleet = await startLinkedFleet();
    await fleet.addHost('web-1', [info('web-1'), stop(stopped)], { role: 'web' });
    await fleet.addHost('db-1', [info('db-1'), stop(stopped)], { role: 'db' });
  });
  afterEach(() => fleet.stop());

  it('fans a read out to every host and merges the answers in host order', async () => {
    const result = await fleet.run(fleet.identity(0), agentInfo, {});
    expect(result.shape).toBe('envelope');
    expect(result.isError).toBe(false);
    expect(result.structured).toMatchObject({
      targeted: 2,
      responded: 2,
      hosts: [
        { host: 'db-1', name: 'db-1', availability: 'available' },
        { host: 'web-1', name: 'web-1', availability: 'available' },
      ],
    });
  });

  it('answers one node for host, and only the selected hosts for a selector', async () => {
    const one = await fleet.run(fleet.identity(0), agentInfo, { host: 'web-1' });
    expect(one).toMatchObject({ shape: 'node', structured: { host: 'web-1', availability: 'available' } });
    const selected = await fleet.run(fleet.identity(0), agentInfo, { selector: 'role=db' });
    expect(selected.structured).toMatchObject({ targeted: 1, hosts: [{ host: 'db-1' }] });
    const nowhere = await fleet.run(fleet.identity(0), agentInfo, { host: 'nowhere' });
    expect(nowhere).toMatchObject({ isError: true, structured: { error: { code: 'not_found' } } });
  });

  it("hides an action above the identity's level as if it did not exist", async () => {
    const result = await fleet.run(fleet.identity(0), dockerStop, { host: 'web-1', name: 'nginx', confirm: true });
    expect(result).toMatchObject({ isError: true, structured: { error: { code: 'not_found' } } });
    const capped = await startLinkedFleet({ operationsLevel: 0 });
    try {
      await capped.addHost('web-1', [stop(stopped)]);
      const refused = await capped.run(capped.identity(3), dockerStop, { host: 'web-1', name: 'nginx', confirm: true });
      expect(refused.structured).toMatchObject({ error: { code: 'not_found' } });
    } finally {
      await capped.stop();
    }
    expect(stopped).toEqual([]);
  });

  it('asks for confirmation before a destructive action, naming what it would act on', async () => {
    const refused = await fleet.run(fleet.identity(1), dockerStop, { host: 'web-1', name: 'nginx' });
    expect(refused.structured).toMatchObject({ error: { code: 'confirm_required' }, targets: [{ host: 'web-1', resource: 'container:web-1/nginx' }] });
    expect(stopped).toEqual([]);
    const done = await fleet.run(fleet.identity(1), dockerStop, { host: 'web-1', name: 'nginx', confirm: true });
    expect(done).toMatchObject({ isError: false, structured: { host: 'web-1', name: 'nginx', changed: true } });
    expect(stopped).toEqual(['nginx']);
  });

  it('refuses a change without a write grant, and hides a resource without a read grant', async () => {
    const reader = fleet.identity(1, ['host:*', 'container:web-1/*=write']);
    const forbidden = await fleet.run(reader, dockerStop, { host: 'db-1', name: 'nginx', confirm: true });
    expect(forbidden.structured).toMatchObject({ error: { code: 'forbidden' } });
    const hidden = await fleet.run(fleet.identity(1, ['container:web-1/nginx=write']), dockerStop, { host: 'web-1', name: 'redis', confirm: true });
    expect(hidden.structured).toMatchObject({ availability: 'unavailable', errors: [{ code: 'not_found' }] });
    const allowed = await fleet.run(reader, dockerStop, { host: 'web-1', name: 'nginx', confirm: true });
    expect(allowed.isError).toBe(false);
    expect(stopped).toEqual(['nginx']);
  });

  it('refuses a change without an explicit target', async () => {
    const result = await fleet.run(fleet.identity(1), dockerStop, { name: 'nginx', confirm: true });
    expect(result.structured).toMatchObject({ error: { code: 'invalid_argument' } });
    expect(stopped).toEqual([]);
  });

  it('answers a partial result: hosts that answered, and why the others did not', async () => {
    await fleet.addHost('old-1', [], { role: 'web' });
    await fleet.addHost('broken-1', [
      {
        action: agentInfo,
        handler: async () => {
          throw new FleetError('collector_unavailable', 'the collector is down');
        },
      },
    ]);
    const result = await fleet.run(fleet.identity(0), agentInfo, { hosts: ['web-1', 'old-1', 'broken-1'] });
    expect(result.isError).toBe(false);
    expect(result.structured).toMatchObject({
      targeted: 3,
      responded: 1,
      hosts: [
        { host: 'broken-1', availability: 'unavailable', errors: [{ code: 'collector_unavailable', host: 'broken-1' }] },
        { host: 'old-1', availability: 'unavailable', errors: [{ code: 'unsupported', host: 'old-1' }] },
        { host: 'web-1', availability: 'available' },
      ],
    });
  });

  it('does not let a slow host hold the others: it answers deadline_exceeded at the timeout', async () => {
    let started = () => {};
    const slowStarted = new Promise<void>((resolve) => (started = resolve));
    await fleet.addHost('slow-1', [
      {
        action: agentInfo,
        handler: (_params, context) =>
          new Promise((_, reject) => {
            started();
            context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
          }),
      },
    ]);
    const progress: string[] = [];
    const running = fleet.run(fleet.identity(0), agentInfo, { timeout_ms: 300 }, { onProgress: (_done, _total, message) => progress.push(message) });
    await slowStarted;
    const result = await running;
    expect(result.structured).toMatchObject({
      targeted: 3,
      responded: 2,
      hosts: [
        { host: 'db-1', availability: 'available' },
        { host: 'slow-1', errors: [{ code: 'deadline_exceeded' }] },
        { host: 'web-1', availability: 'available' },
      ],
    });
    // The two fast hosts were reported answered before the slow one gave up.
    expect(progress.slice(0, 3)).toEqual(['sent to 3 hosts', expect.stringMatching(/answered/), expect.stringMatching(/answered/)]);
  });

  it('cancels the call on the agent when the caller goes away', async () => {
    let agentSaw: unknown;
    let resolve = () => {};
    const started = new Promise<void>((resolved) => (resolve = resolved));
    await fleet.addHost('slow-1', [
      {
        action: agentInfo,
        handler: (_params, context) =>
          new Promise((_, reject) => {
            resolve();
            context.signal.addEventListener(
              'abort',
              () => {
                agentSaw = context.signal.reason;
                reject(context.signal.reason);
              },
              { once: true },
            );
          }),
      },
    ]);
    const caller = new AbortController();
    const running = fleet.run(fleet.identity(0), agentInfo, { host: 'slow-1' }, { signal: caller.signal });
    await started;
    caller.abort();
    const result = await running;
    expect(result.isError).toBe(true);
    const slow = fleet.registry.find('slow-1');
    expect(slow?.session?.inFlight).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(agentSaw).toBeInstanceOf(FleetError);
  });

  it('writes an audit row for calls of level 1 or more, and a refusal row for a refused change', async () => {
    const operator = fleet.identity(1, undefined, 'ops');
    await fleet.run(operator, agentInfo, {});
    await fleet.run(operator, dockerStop, { host: 'web-1', name: 'nginx', confirm: true });
    await fleet.run(operator, dockerStop, { host: 'web-1', name: 'nginx' });
    const rows = await fleet.store.audit.recent({ limit: 10 });
    expect(rows.map((row) => [row.identity, row.action, row.outcome, row.errorCode])).toEqual([
      ['ops', 'docker.stop', 'refused', 'confirm_required'],
      ['ops', 'docker.stop', 'ok', null],
    ]);
    expect(rows[1]).toMatchObject({ targets: ['web-1'], arguments: { host: 'web-1', name: 'nginx', confirm: true } });
  });

  it("keeps the answer fields an action declares in its audit row, and each host's own refusal in the refusal audit", async () => {
    const echo = defineAction({
      id: 'probe.echo',
      tool: 'probe_echo',
      risk: 'write',
      level: 1,
      runsOn: 'host',
      collector: 'probe',
      title: 'Echo',
      description: 'Echoes on the host.',
      input: z.object({ word: z.string() }).strict(),
      output: z.object({ argv: z.array(z.string()), exit_code: z.number() }),
      audits: ['argv'],
    });
    const handler: LinkedAction['handler'] = async (params, context) => {
      if (context.callerLevel < 2) throw new FleetError('forbidden', `"${(params as { word: string }).word}" is level 2 on this host`);
      return { payload: { argv: ['/bin/echo', (params as { word: string }).word], exit_code: 0 } };
    };
    await fleet.addHost('echo-1', [{ action: echo, handler }]);
    await fleet.addHost('echo-2', [{ action: echo, handler }]);
    await fleet.run(fleet.identity(2, undefined, 'admin'), echo, { hosts: ['echo-1', 'echo-2'], word: 'hi; ls' });
    const [ran] = await fleet.store.audit.recent({ limit: 1 });
    expect(ran).toMatchObject({ identity: 'admin', outcome: 'ok', arguments: { hosts: ['echo-1', 'echo-2'], word: 'hi; ls' } });
    expect(ran?.note).toBe('echo-1: argv=["/bin/echo","hi; ls"]; echo-2: argv=["/bin/echo","hi; ls"]');

    await fleet.run(fleet.identity(1, undefined, 'ops'), echo, { host: 'echo-2', word: 'up' });
    const refused = await fleet.store.audit.recent({ limit: 10, refused: true, identity: 'ops' });
    expect(refused.map((row) => [row.tool, row.targets, row.errorCode, row.reason, row.arguments])).toEqual([
      ['probe_echo', ['echo-2'], 'forbidden', 'echo-2 refused: "up" is level 2 on this host', { host: 'echo-2', word: 'up' }],
    ]);
  });

  it('runs a broker action without any agent', async () => {
    const result = await fleet.run(fleet.identity(0), fleetStatus, {});
    expect(result).toMatchObject({ shape: 'broker', isError: false, structured: { counts: { online: 2, total: 2 } } });
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dockerStop } from '../../../shared/domains/docker/docker-actions.ts';
import { type LinkedFleet, startLinkedFleet } from '../../../test/harness/linked-fleet.ts';
import { recordingStop } from '../../../test/harness/recording-stop.ts';
import { ToolGlobSet } from '../../auth/tool-filter.ts';
import type { ToolOutcome } from '../../mcp/tool-result.ts';
import type { ApprovalRule } from './approval-rule.ts';
import { decideApproval } from './decide-approval.ts';

const stop = recordingStop;

describe('calls that wait for a second person', () => {
  let fleet: LinkedFleet;
  const stopped: string[] = [];
  const rule: ApprovalRule = { level: 1, tools: new ToolGlobSet([]), ttlMs: 60_000 };

  beforeEach(async () => {
    stopped.length = 0;
    fleet = await startLinkedFleet({ approvals: rule });
    await fleet.addHost('web-1', [stop(stopped)], { role: 'web' });
  });
  afterEach(() => fleet.stop());

  /** Starts a stop of nginx on web-1 as `caller`; resolves the approval's id once the call says it waits. */
  function stopWaiting(caller = fleet.identity(1, ['host:*=write', 'container:*=write'], 'alice'), signal?: AbortSignal) {
    const waiting: string[] = [];
    let told: (id: string) => void = () => {};
    const id = new Promise<string>((resolve) => {
      told = resolve;
    });
    const outcome: Promise<ToolOutcome> = fleet.run(
      caller,
      dockerStop,
      { host: 'web-1', name: 'nginx', confirm: true },
      {
        ...(signal ? { signal } : {}),
        onApproval: (message) => {
          if (message === undefined) return;
          waiting.push(message);
          told(/ap-[0-9a-f]+/.exec(message)?.[0] ?? '');
        },
      },
    );
    return { caller, id, outcome, waiting };
  }

  it('holds a change until another identity approves it, then runs it and audits both people', async () => {
    const call = stopWaiting();
    const id = await call.id;
    expect(call.waiting[0]).toContain(`fleetmesh approvals approve ${id}`);
    const [pending] = await fleet.store.approvals.list({ pending: true, limit: 10, now: Date.now() });
    expect(pending).toMatchObject({ id, identity: 'alice', tool: 'docker_stop', level: 1, targets: [expect.stringContaining('web-1')], state: 'pending' });
    expect(pending?.arguments).toMatchObject({ host: 'web-1', name: 'nginx' });
    expect(stopped).toEqual([]);

    await decideApproval(fleet.store, id, 'approve', { name: 'bob', identityId: 'identity-bob', level: 2 }, 'planned');
    const outcome = await call.outcome;
    expect(outcome.isError).toBe(false);
    expect(stopped).toEqual(['nginx']);
    const rows = await fleet.store.audit.recent({ limit: 10 });
    expect(rows.find((row) => row.tool === 'docker_stop')).toMatchObject({ identity: 'alice', outcome: 'ok', approvedBy: 'bob' });
    expect(rows.find((row) => row.tool === 'approvals approve')).toMatchObject({
      identity: 'bob',
      outcome: 'ok',
      arguments: { approval: id, caller: 'alice' },
    });
    expect((await fleet.store.approvals.get(id))?.state).toBe('approved');
  });

  it('lets neither the caller nor someone of a lower level decide', async () => {
    const call = stopWaiting();
    const id = await call.id;
    await expect(decideApproval(fleet.store, id, 'approve', { name: 'alice', identityId: call.caller.id, level: 1 }, undefined)).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(decideApproval(fleet.store, id, 'approve', { name: 'carol', identityId: 'identity-carol', level: 0 }, undefined)).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect((await fleet.store.approvals.get(id))?.state).toBe('pending');
    await decideApproval(fleet.store, id, 'deny', { name: 'operator' }, 'not now');
    const outcome = await call.outcome;
    expect(outcome.structured).toMatchObject({ error: { code: 'forbidden', message: expect.stringContaining('denied by operator: not now') } });
    expect(stopped).toEqual([]);
    await expect(decideApproval(fleet.store, id, 'approve', { name: 'bob' }, undefined)).rejects.toMatchObject({ code: 'conflict' });
  });

  it('ends a call no one decided in time as expired, and one its caller gave up as withdrawn', async () => {
    const quick = await startLinkedFleet({ approvals: { ...rule, ttlMs: 300 } });
    try {
      await quick.addHost('web-1', [stop(stopped)]);
      const outcome = await quick.run(quick.identity(1), dockerStop, { host: 'web-1', name: 'nginx', confirm: true });
      expect(outcome.structured).toMatchObject({ error: { code: 'deadline_exceeded', message: expect.stringContaining('expired') } });
      const [expired] = await quick.store.approvals.list({ pending: false, limit: 10, now: Date.now() });
      expect(expired?.state).toBe('expired');
    } finally {
      await quick.stop();
    }

    const controller = new AbortController();
    const call = stopWaiting(undefined, controller.signal);
    const id = await call.id;
    controller.abort();
    expect((await call.outcome).structured).toMatchObject({ error: { code: 'cancelled' } });
    expect((await fleet.store.approvals.get(id))?.state).toBe('withdrawn');
    expect(stopped).toEqual([]);
  });

  it('lets reads through, and waits by tool name whatever the level', async () => {
    const byTool = await startLinkedFleet({ approvals: { level: undefined, tools: new ToolGlobSet(['docker_*']), ttlMs: 300 } });
    try {
      await byTool.addHost('web-1', [stop(stopped)]);
      const outcome = await byTool.run(byTool.identity(1), dockerStop, { host: 'web-1', name: 'nginx', confirm: true });
      expect(outcome.structured).toMatchObject({ error: { code: 'deadline_exceeded' } });
    } finally {
      await byTool.stop();
    }
    expect(stopped).toEqual([]);
  });
});

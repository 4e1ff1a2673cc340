import { create } from '@bufbuild/protobuf';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentFrameSchema, HeartbeatSchema } from '../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { CliProcess } from './harness/cli-process.ts';
import { call, identityToken, mcpClient, text } from './harness/mcp-client.ts';
import { openRawStream } from './harness/raw-stream.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

interface Node {
  host: string;
  availability: string;
  errors: { code: string; message: string; host?: string }[];
}

describe('tool calls across the fleet', () => {
  let fleet: TestFleet;
  const processes: CliProcess[] = [];
  beforeEach(async () => {
    fleet = await startTestFleet({ heartbeatIntervalMs: 60_000 });
  });
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await fleet.stop();
  });

  async function agentProcess(name: string): Promise<CliProcess> {
    const child = new CliProcess(await fleet.agentArgs(name));
    processes.push(child);
    return child;
  }

  it('reports an agent killed mid-call and one that never answers, keeps the others, and returns by the deadline', async () => {
    await fleet.addAgent('ok-1');
    await fleet.addAgent('ok-2');
    const doomed = await agentProcess('doomed');
    const frozen = await agentProcess('frozen');
    await waitFor(() => ['doomed', 'frozen'].every((n) => fleet.broker.registry.find(n)?.state === 'online'), { what: 'child agents online' });
    frozen.signal('SIGSTOP');

    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1));
    const pending = call(client, 'agent_info', { watch_ms: 1500, interval_ms: 200, timeout_ms: 4000 });
    await waitFor(() => (fleet.broker.registry.find('doomed')?.session?.inFlight ?? 0) > 0, { what: 'the call reaching doomed' });
    doomed.signal('SIGKILL');
    const result = await pending;

    const envelope = result.structuredContent as { targeted: number; responded: number; hosts: Node[]; errors: Node['errors'] };
    expect(result.isError).toBeFalsy();
    expect(envelope.targeted).toBe(4);
    expect(envelope.responded).toBe(2);
    const byHost = Object.fromEntries(envelope.hosts.map((n) => [n.host, n]));
    expect(envelope.hosts.map((n) => n.host)).toEqual(['doomed', 'frozen', 'ok-1', 'ok-2']);
    expect(byHost['ok-1']?.availability).toBe('available');
    expect(byHost['ok-2']?.availability).toBe('available');
    expect(byHost.doomed).toMatchObject({ availability: 'unavailable', errors: [{ code: 'agent_disconnected', host: 'doomed' }] });
    expect(byHost.frozen).toMatchObject({ availability: 'unavailable', errors: [{ code: 'deadline_exceeded', host: 'frozen' }] });
    expect(envelope.errors.map((e) => `${e.host}:${e.code}`).sort()).toEqual(['doomed:agent_disconnected', 'frozen:deadline_exceeded']);
    expect(text(result)).toMatch(/2 of 4 hosts answered/);
    await client.close();
  });

  it('streams the samples of a watch to the client as progress, before the result', async () => {
    await fleet.addAgent('w-1');
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const arrivals: string[] = [];
    const pending = call(
      client,
      'agent_info',
      { host: 'w-1', watch_ms: 1000, interval_ms: 200 },
      {
        onprogress: (p) => {
          progress.push(p);
          arrivals.push(p.message ?? '');
        },
      },
    ).then((result) => {
      arrivals.push('result');
      return result;
    });
    const result = await pending;
    expect(result.structuredContent).toMatchObject({ host: 'w-1', availability: 'available', sample: expect.any(Object) });
    const streamed = progress.filter((p) => p.message?.startsWith('w-1: uptime_s='));
    expect(streamed.length).toBeGreaterThanOrEqual(3);
    expect(streamed[0]?.message).toMatch(/sample: /);
    // The answer holds every sample that streamed, not only the last.
    const samples = (result.structuredContent as { samples?: { uptime_s: number; sample: object }[] }).samples ?? [];
    expect(samples).toHaveLength(streamed.length);
    expect(samples.every((s) => typeof s.sample === 'object')).toBe(true);
    // Every sample came before the result.
    expect(arrivals.at(-1)).toBe('result');
    // MCP asks progress to grow with every notification.
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    expect(progress.at(-1)).toMatchObject({ progress: 1, total: 1, message: 'w-1: answered' });
    await client.close();
  });

  it('refuses a change without explicit targets, and a destructive one without confirm, changing nothing', async () => {
    // a-1 gives itself the label; only a-2's comes from the operator (its join token), so only a-2 is a target of a change.
    await fleet.addAgent('a-1', { labels: { doomed: 'yes' } });
    await fleet.addAgent('a-2', { token: await fleet.token({ labels: { doomed: 'yes' } }) });
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    const untargeted = await call(client, 'set_agent_labels', { labels: { x: 'y' } });
    expect(untargeted.structuredContent.error).toMatchObject({ code: 'invalid_argument' });
    expect(text(untargeted)).toMatch(/needs explicit targets/);

    const unconfirmed = await call(client, 'revoke_agent', { selector: 'doomed=yes' });
    expect(unconfirmed.isError).toBe(true);
    expect(unconfirmed.structuredContent).toMatchObject({ error: { code: 'confirm_required' }, targets: [{ host: 'a-2' }] });
    expect(fleet.broker.registry.find('a-2')?.state).toBe('online');

    const confirmed = await call(client, 'revoke_agent', { selector: 'doomed=yes', confirm: true });
    expect(confirmed.structuredContent).toMatchObject({ revoked: [{ host: 'a-2', certificates: 1 }] });
    expect(fleet.broker.registry.find('a-2')).toBeUndefined();
    expect(fleet.broker.registry.find('a-1')?.state).toBe('online');
    await client.close();
  });

  it('answers unsupported for an agent too old for an action, without waiting on it', async () => {
    await fleet.addAgent('new-1');
    const donor = await fleet.addAgent('old-1');
    await fleet.stopAgent(donor);
    // An agent whose Hello offers no actions, as one from before agent.info would.
    const old = openRawStream(fleet.address, donor.connection.currentIdentity, { actions: [] });
    await waitFor(() => old.frames.some((f) => f.frame.case === 'welcome'));
    old.stream.write(create(AgentFrameSchema, { frame: { case: 'heartbeat', value: create(HeartbeatSchema, {}) } }));
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const result = await call(client, 'agent_info', { timeout_ms: 30_000 });
    const byHost = Object.fromEntries((result.structuredContent.hosts as Node[]).map((n) => [n.host, n]));
    expect(byHost['old-1']).toMatchObject({ availability: 'unavailable', errors: [{ code: 'unsupported' }] });
    expect(byHost['new-1']?.availability).toBe('available');
    old.close();
    await client.close();
  });
});

import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentState } from '../../broker/store/agents-table.ts';
import { CliProcess } from '../harness/cli-process.ts';
import { canMakeNamespaces, makeNamespacePair, type NamespacePair } from '../harness/network-namespaces.ts';
import { TcpProxy } from '../harness/tcp-proxy.ts';
import { startTestFleet, type TestFleet } from '../harness/test-fleet.ts';
import { waitFor } from '../harness/wait.ts';

const FORWARDER = fileURLToPath(new URL('../harness/ns-forwarder.mjs', import.meta.url));
const HEARTBEAT_MS = 500;

/**
 * An agent process in a network namespace of its own, joined by a veth pair to
 * a namespace where a forwarder passes its traffic to the test's broker: the
 * agent's only route to the broker is a link the test can take down.
 */
describe.skipIf(!canMakeNamespaces())('a network partition between an agent and the broker', () => {
  let fleet: TestFleet | undefined;
  let namespaces: NamespacePair | undefined;
  let proxy: TcpProxy | undefined;
  const children: ChildProcess[] = [];
  const processes: CliProcess[] = [];

  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    for (const child of children.splice(0)) child.kill('SIGKILL');
    await proxy?.stop();
    await fleet?.stop();
    namespaces?.remove();
    fleet = undefined;
    namespaces = undefined;
    proxy = undefined;
  });

  it('makes the cut-off agent stale, then offline after the grace, fails its calls by their deadline, and has it back soon after the link returns', async () => {
    namespaces = makeNamespacePair();
    fleet = await startTestFleet({ advertiseNames: ['localhost', namespaces.brokerAddress], heartbeatIntervalMs: HEARTBEAT_MS });
    proxy = new TcpProxy({ host: '127.0.0.1', port: fleet.broker.grpcPort });
    const socketPath = join(fleet.root, 'broker.sock');
    await proxy.start({ path: socketPath });
    const forwarder = spawn(namespaces.exec(namespaces.brokerNs)[0] as string, [
      ...namespaces.exec(namespaces.brokerNs).slice(1),
      process.execPath,
      FORWARDER,
      `${namespaces.brokerAddress}:7443`,
      socketPath,
    ]);
    children.push(forwarder);
    await new Promise((resolve) => forwarder.stdout?.once('data', resolve));

    const agent = new CliProcess(
      [
        'agent',
        '--broker',
        `${namespaces.brokerAddress}:7443`,
        '--token',
        await fleet.token(),
        '--ca-pin',
        fleet.pin,
        '--name',
        'islander',
        '--data-dir',
        fleet.agentDir('islander'),
      ],
      { prefix: namespaces.exec(namespaces.agentNs) },
    );
    processes.push(agent);
    const broker = fleet.broker;
    await waitFor(() => broker.registry.find('islander')?.state === 'online', { what: 'islander online', timeoutMs: 60_000 });
    const states: { state: AgentState; at: number }[] = [];
    broker.registry.on('state', (host) => {
      if (host.name === 'islander') states.push({ state: host.state, at: Date.now() });
    });
    const host = broker.registry.find('islander');
    const lastHeartbeatAt = () => host?.lastHeartbeatAt ?? 0;

    namespaces.cut();
    const cutAt = Date.now();
    const heardBeforeCut = lastHeartbeatAt();
    // A call sent across the cut settles by its deadline, with an error that says so.
    const deadlineUnixMs = Date.now() + 1000;
    const outcome = await host?.session?.call({ action: 'agent.info', params: {}, deadlineUnixMs, caller: 'partition-test' });
    expect(outcome).toMatchObject({ ok: false });
    if (outcome && !outcome.ok) expect(['deadline_exceeded', 'agent_disconnected']).toContain(outcome.error.code);

    await waitFor(() => states.some((s) => s.state === 'offline'), { what: 'islander offline', timeoutMs: 30_000 });
    expect(states.map((s) => s.state)).toEqual(['stale', 'offline']);
    // Stale within three heartbeats of the last one heard (the sweep looks four times per interval).
    const staleAt = states[0]?.at ?? 0;
    expect(staleAt - Math.max(heardBeforeCut, cutAt - HEARTBEAT_MS)).toBeLessThanOrEqual(3 * HEARTBEAT_MS + HEARTBEAT_MS);

    namespaces.restore();
    const restoredAt = Date.now();
    await waitFor(() => states.at(-1)?.state === 'online', { what: 'islander back online', timeoutMs: 30_000 });
    expect((states.at(-1)?.at ?? 0) - restoredAt).toBeLessThanOrEqual(5000);
  });
});

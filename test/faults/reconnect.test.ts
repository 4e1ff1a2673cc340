import { create } from '@bufbuild/protobuf';
import { afterEach, describe, expect, it } from 'vitest';
import { ReconnectSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { captureLogger } from '../harness/capture-logger.ts';
import { TcpProxy } from '../harness/tcp-proxy.ts';
import { startTestFleet, type TestFleet } from '../harness/test-fleet.ts';
import { nextEvent, waitFor } from '../harness/wait.ts';

const TOLD_TO_COME_BACK = 'the broker asked this agent to reconnect later';

describe('agents told when to come back', () => {
  let fleet: TestFleet | undefined;
  let proxy: TcpProxy | undefined;

  afterEach(async () => {
    await fleet?.stop();
    await proxy?.stop();
    fleet = undefined;
    proxy = undefined;
  });

  it('takes agents past the admission rate on in turn, none refused or sent away to retry', async () => {
    // Each agent dials twice (Enroll, then its stream): eight connections, one at once and then one every 250 ms.
    fleet = await startTestFleet({ admissionRate: { burst: 1, perSecond: 4 } });
    const logs = ['paced-1', 'paced-2', 'paced-3', 'paced-4'].map(() => captureLogger());
    const startedMs = Date.now();
    await Promise.all(logs.map(({ log }, i) => fleet?.addAgent(`paced-${i + 1}`, { log })));
    expect(fleet.broker.registry.list().filter((host) => host.state === 'online')).toHaveLength(4);
    // The gate held the excess rather than admitting them at once: eight connections cannot pass in less than 7 slots.
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(7 * 250);
    const lines = logs.flatMap(({ lines }) => lines);
    expect(lines.filter((line) => line.message === TOLD_TO_COME_BACK)).toEqual([]);
    expect(lines.filter((line) => /retrying/.test(String(line.message)))).toEqual([]);
  });

  it('sends the agent to the address a Reconnect names, once, with the same CA', async () => {
    fleet = await startTestFleet();
    proxy = new TcpProxy({ host: '127.0.0.1', port: fleet.broker.grpcPort });
    const port = await proxy.start();
    const agent = await fleet.addAgent('mover');
    const session = fleet.broker.registry.localSessions().find((s) => s.agentId === fleet?.broker.registry.find('mover')?.id);
    const back = nextEvent(agent.connection, 'connected');
    session?.send({ case: 'reconnect', value: create(ReconnectSchema, { delayMs: 0, address: `localhost:${port}`, reason: 'draining' }) });
    await back;
    await waitFor(() => fleet?.broker.registry.find('mover')?.state === 'online', { what: 'mover online' });
    expect(proxy.connections).toBe(1);
  });
});

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import { caPinsOf } from '../agent/enrollment/fetch-broker-ca.ts';
import { agentsByCa, type RotationStep, rotateCa } from '../broker/admin/ca-rotation.ts';
import { readCaSet } from '../broker/pki/fleet-authority.ts';
import { runFleetmesh } from './harness/cli-process.ts';
import { startTestCluster, type TestCluster } from './harness/test-cluster.ts';
import { TEST_CA_KEY_SECRET } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

/** Every file under a directory, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The base64 body of a PEM, without its lines' breaks: what a copy of the key would contain. */
const pemBody = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

describe('one signer for a cluster of three brokers', () => {
  let cluster: TestCluster;
  const agents: Agent[] = [];
  const names = ['on-a', 'on-b', 'on-c'];

  beforeAll(async () => {
    cluster = await startTestCluster({ oneSigner: true });
    agents.push(await cluster.addAgent('on-a', 'a'), await cluster.addAgent('on-b', 'b'), await cluster.addAgent('on-c', 'c'));
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const store = () => cluster.a.store;
  const step = (to: RotationStep) => rotateCa(store(), to, { dataDir: cluster.a.options.dataDir, secret: TEST_CA_KEY_SECRET });
  const onCa = async (pin: string) => (await agentsByCa(store(), await readCaSet(store()))).get(pin) ?? [];

  it('keeps the CA key only sealed in the store and in no broker data dir; the broker without the secret enrolls through the signer', async () => {
    expect(await store().signer.holder(Date.now())).toBe('b');
    expect(cluster.a.authority.canSign()).toBe(false);
    expect(cluster.a.cluster?.signing.signing).toBe(false);
    expect(cluster.a.registry.find('on-a')?.state).toBe('online');
    const caKey = pemBody(readFileSync(cluster.caFiles.key, 'utf8'));
    for (const dir of ['a', 'b', 'c'].map((name) => join(cluster.a.options.dataDir, '..', name))) {
      for (const file of filesUnder(dir)) expect(pemBody(readFileSync(file, 'latin1')).includes(caKey.slice(0, 200)), file).toBe(false);
    }
    const rows = await store().authorities.list();
    expect(rows.map((row) => row.keySealed === null)).toEqual([false]);
    expect(JSON.stringify(rows)).not.toContain(caKey.slice(0, 200));
  });

  it('completes a rotation after the signer is SIGKILLed in the middle of it: another broker that may sign takes the lease', async () => {
    const old = cluster.a.authority.pin;
    const next = (await step('init')).next?.pin as string;
    await waitFor(() => agents.every((agent) => caPinsOf(agent.connection.currentIdentity.caCertificatePem).join(',') === `${old},${next}`), {
      what: 'every agent trusting both CAs',
    });
    await step('update-clients');
    cluster.b.signal('SIGKILL');
    await cluster.b.exited;
    await waitFor(async () => (await store().signer.holder(Date.now())) === 'c', { what: 'c holding the signer lease', timeoutMs: 30_000 });
    await waitFor(async () => (await onCa(next)).length === names.length, { what: 'every agent renewed under the next CA', timeoutMs: 60_000 });

    await step('update-servers');
    await waitFor(() => [cluster.a, cluster.c].every((broker) => broker.serving.current.caPin === next), {
      what: 'a and c serving certificates of the next CA, a through the signer',
      timeoutMs: 30_000,
    });
    const set = await step('standby');
    expect(set.trustedPins()).toEqual([next]);
    await waitFor(
      () =>
        agents.every((agent) => agent.connection.connected && caPinsOf(agent.connection.currentIdentity.caCertificatePem).join(',') === next) &&
        names.every((name) => cluster.a.registry.find(name)?.state === 'online'),
      { what: 'every agent back online, trusting only the new CA', timeoutMs: 60_000 },
    );
    const status = await runFleetmesh(['ca', 'status', '--data-dir', cluster.a.options.dataDir, '--store', cluster.storeUrl, '--output', 'json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ phase: 'standby', enrollment_pins: [next] });
    // A newcomer enrolls through a, which holds no key, with the pin printed now.
    const newcomer = await cluster.addAgent('newcomer', 'a');
    expect(caPinsOf(newcomer.connection.currentIdentity.caCertificatePem)).toEqual([next]);
  }, 180_000);
});

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { AGENT_COMMAND } from '../agent/agent-options.ts';
import { BROKER_COMMAND } from '../broker/broker-options.ts';
import type { CommandSpec } from '../shared/options/command-line.ts';
import { runFleetmesh } from './harness/cli-process.ts';
import { flagVariables } from './harness/flag-variables.ts';
import { REPO_ROOT, run } from './harness/fleetmesh-image.ts';
import { makeTempDir } from './harness/temp-dir.ts';

/** Debian's docker-compose v1, which .ci/run installs. */
const COMPOSE = '/usr/bin/docker-compose';

interface Service {
  command?: string[];
  environment: Record<string, string>;
  deploy?: { mode?: string; replicas?: number; endpoint_mode?: string; placement?: { max_replicas_per_node?: number } };
  ports?: { target: number; published: number | string; mode?: string }[];
}

describe('the cluster deploy files', () => {
  const temp = makeTempDir('fm-cluster-deploy-');
  const secrets = join(temp.path, 'secrets');
  const config = async (file: string, env: Record<string, string> = {}): Promise<{ services: Record<string, Service> }> =>
    parse(
      await run(COMPOSE, ['--file', join(REPO_ROOT, file), '--project-directory', REPO_ROOT, 'config'], {
        env: { ...process.env, FLEETMESH_SECRETS: secrets, FLEETMESH_DB_PASSWORD: 'db-secret', FLEETMESH_BUS_TOKEN: 'bus-secret', ...env },
      }),
    );

  beforeAll(async () => {
    expect(existsSync(COMPOSE), `${COMPOSE} is missing: apt-get install -y docker-compose (.ci/run does)`).toBe(true);
    expect((await runFleetmesh(['bootstrap', '--out', secrets])).code).toBe(0);
  });
  afterAll(() => temp.remove());

  const brokerVariables = flagVariables(BROKER_COMMAND as unknown as CommandSpec);
  const agentVariables = flagVariables(AGENT_COMMAND as unknown as CommandSpec);

  it('runs N broker replicas on a swarm, one per node, numbered by slot, on PostgreSQL and NATS, with agents dialling them all by one name', async () => {
    const { services } = await config('docker-stack.cluster.yml', { FLEETMESH_BROKER_REPLICAS: '5' });
    expect(Object.keys(services).sort()).toEqual(['agent', 'broker', 'nats', 'postgres']);
    const { broker, agent } = services as { broker: Service; agent: Service };
    expect(broker.deploy).toMatchObject({ replicas: 5, endpoint_mode: 'dnsrr', placement: { max_replicas_per_node: 1 } });
    expect(broker.ports?.every((port) => port.mode === 'host')).toBe(true);
    expect(broker.environment).toMatchObject({
      FLEETMESH_BROKER_ID: 'broker-{{.Task.Slot}}',
      FLEETMESH_STORE: 'postgres://fleetmesh:db-secret@postgres:5432/fleetmesh',
      FLEETMESH_BUS: 'tls://bus-secret@nats:4222',
      FLEETMESH_BUS_CA_FILE: '/run/secrets/fleetmesh_ca_crt',
    });
    // The bus speaks TLS with the certificate fleetmesh bootstrap made, and asks for the token.
    expect(services.nats?.command).toEqual(expect.arrayContaining(['--tls', '--tlscert', '--tlskey', '--auth', 'bus-secret']));
    expect(broker.environment.FLEETMESH_ADVERTISE_NAMES?.split(',')).toContain('broker');
    expect(agent.deploy?.mode).toBe('global');
    expect(agent.environment.FLEETMESH_BROKER).toBe('broker:7443');
    expect(Object.keys(broker.environment).filter((name) => !brokerVariables.has(name))).toEqual([]);
    expect(Object.keys(agent.environment).filter((name) => !agentVariables.has(name))).toEqual([]);
    expect((await config('docker-stack.cluster.yml')).services.broker?.deploy?.replicas).toBe(3);
  });

  it('runs three brokers with compose, each naming where agents reach it, with agents given all three', async () => {
    const { services } = await config('docker-compose.cluster.yml');
    const brokers = ['broker-1', 'broker-2', 'broker-3'].map((name) => services[name] as Service);
    for (const [i, broker] of brokers.entries()) {
      expect(broker.environment.FLEETMESH_BROKER_ID).toBe(`broker-${i + 1}`);
      const address = broker.environment.FLEETMESH_CLUSTER_ADDRESS ?? '';
      expect(address).toBe(`broker-${i + 1}:7443`);
      // The address the others send agents to is a name this broker's certificate carries.
      expect(broker.environment.FLEETMESH_ADVERTISE_NAMES?.split(',')).toContain(address.split(':')[0]);
      expect(Object.keys(broker.environment).filter((name) => !brokerVariables.has(name))).toEqual([]);
    }
    expect(services.agent?.environment.FLEETMESH_BROKER).toBe('broker-1:7443,broker-2:7443,broker-3:7443');
    expect(brokers.map((broker) => broker.environment.FLEETMESH_BUS)).toEqual(Array(3).fill('tls://bus-secret@nats:4222'));
    // One broker is given the CA key, to seal it into the store; every one gets the secret that opens it there.
    expect(brokers.map((broker) => broker.environment.FLEETMESH_CA_KEY_FILE)).toEqual(['/run/secrets/fleetmesh_ca_key', undefined, undefined]);
    expect(brokers.every((broker) => broker.environment.FLEETMESH_CA_KEY_SECRET_FILE === '/run/secrets/fleetmesh_ca_key_secret')).toBe(true);
    expect(services.nats?.command).toEqual(expect.arrayContaining(['--tls', '--auth', 'bus-secret']));
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import { caPinsOf } from '../agent/enrollment/fetch-broker-ca.ts';
import { agentsByCa, type RotationStep, rotateCa } from '../broker/admin/ca-rotation.ts';
import type { Host } from '../broker/agents/agent-registry.ts';
import { readCaSet } from '../broker/pki/fleet-authority.ts';
import { createKeyPair, type KeyPair } from '../shared/pki/certificates.ts';
import { captureLogger } from './harness/capture-logger.ts';
import { runFleetmesh } from './harness/cli-process.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

/** A few key pairs every agent of a test fleet takes in turn: RSA makes one in 0.2 s, and hundreds of agents renew at once. */
async function keyPool(size: number): Promise<() => Promise<KeyPair>> {
  const pool = await Promise.all(Array.from({ length: size }, () => createKeyPair()));
  let next = 0;
  return async () => pool[next++ % pool.length] as KeyPair;
}

/** The fleet's CA set now, and every live agent by the CA of its current certificate. */
async function caState(fleet: TestFleet) {
  const set = await readCaSet(fleet.broker.store);
  return { set, byCa: await agentsByCa(fleet.broker.store, set) };
}

const trusts = (agent: Agent) => caPinsOf(agent.connection.currentIdentity.caCertificatePem);

/** Fan-out rounds to the fleet's agents while a test runs; a host that fails is asked once more, and what fails twice is kept. */
function callsUnderway(fleet: TestFleet, names: readonly string[]) {
  let running = true;
  let started = 0;
  let rounds = 0;
  /** Each whole round: the order it started in, and the phase it started in. */
  const done: { index: number; phase: string }[] = [];
  /** The rotation phase each round ran in (the broker's, read as the round starts). */
  const phases = new Set<string>();
  let answers = 0;
  let retried = 0;
  const lost: string[] = [];
  const loop = (async () => {
    while (running) {
      const hosts = names.map((name) => fleet.broker.registry.find(name) as Host);
      const phase = fleet.broker.authority.set.phase;
      const index = started++;
      const outcomes = await fleet.broker.fanOut(hosts, { action: 'agent.info', params: {}, timeoutMs: 10_000, caller: 'rotation-test' });
      rounds += 1;
      phases.add(phase);
      const failed: Host[] = [];
      for (const { host, outcome } of outcomes) {
        if (outcome.ok) answers += 1;
        else failed.push(host);
      }
      // One retry for each, once it is back on a stream of its own (a rotation step may have it reconnect).
      retried += failed.length;
      await Promise.all(
        failed.map((host) => {
          const failedSession = host.session;
          return waitFor(
            () => {
              const now = fleet.broker.registry.find(host.name)?.session;
              return now?.isOpen && now !== failedSession;
            },
            { what: `${host.name} back`, timeoutMs: 20_000 },
          ).catch(() => {});
        }),
      );
      if (failed.length) {
        const again = await fleet.broker.fanOut(
          failed.map((host) => fleet.broker.registry.find(host.name) as Host),
          { action: 'agent.info', params: {}, timeoutMs: 10_000, caller: 'rotation-test' },
        );
        for (const { host, outcome } of again) {
          if (outcome.ok) answers += 1;
          else lost.push(`${host.name}: ${outcome.error.code}`);
        }
      }
      done.push({ index, phase });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    /**
     * Resolves once a round started after this call has run whole in this
     * phase, its retries too. Counting rounds is not enough: the broker reads
     * a step from the store on its next look, and a round waiting for hosts
     * to come back can outlast a phase.
     */
    async round(phase: string) {
      const from = started;
      await waitFor(() => done.some((round) => round.index >= from && round.phase === phase), {
        what: `a fan-out round in phase ${phase}`,
        timeoutMs: 60_000,
      });
    },
    async stop() {
      running = false;
      await loop;
      return { rounds, answers, retried, lost, phases: [...phases].sort() };
    },
  };
}

describe('a CA rotation with 200 agents connected and calls running', () => {
  const FLEET = 200;
  let fleet: TestFleet;
  const agents: Agent[] = [];
  let newKeys: () => Promise<KeyPair>;
  /** Away for the whole rotation: it comes back trusting only the old CA. */
  let awayThroughout: Agent;
  /** Away from before update-clients until the end: it trusts both CAs but holds a certificate of the old one. */
  let awayFromUpdateClients: Agent;
  /** Away from before init until update-servers, when the old CA is still trusted. */
  let backInUpdateServers: Agent;

  const step = (to: RotationStep) => rotateCa(fleet.broker.store, to, { dataDir: fleet.broker.options.dataDir });

  beforeAll(async () => {
    newKeys = await keyPool(4);
    fleet = await startTestFleet({
      heartbeatIntervalMs: 2000,
      // The fleet enrolls from one address at once.
      enrollLimits: { perSource: { burst: 1000, perMinute: 10_000 }, perToken: { burst: 1000, perMinute: 10_000 } },
    });
    for (let i = 0; i < FLEET; i += 20) {
      agents.push(...(await Promise.all(Array.from({ length: Math.min(20, FLEET - i) }, (_, j) => fleet.addAgent(`rot-${i + j}`, { newKeys })))));
    }
    awayThroughout = await fleet.addAgent('away-throughout', { newKeys });
    awayFromUpdateClients = await fleet.addAgent('away-from-update-clients', { newKeys });
    backInUpdateServers = await fleet.addAgent('back-in-update-servers', { newKeys });
  }, 240_000);

  afterAll(async () => {
    await fleet?.stop();
  });

  it('moves every agent to the new CA phase by phase, losing no call beyond one retry, and tells those that missed it why in words', async () => {
    const old = fleet.broker.authority.pin;
    await fleet.stopAgent(awayThroughout);
    await fleet.stopAgent(backInUpdateServers);
    const calls = callsUnderway(
      fleet,
      agents.map((agent) => agent.connection.currentIdentity.name),
    );

    let { set } = await caState(fleet);
    set = await step('init');
    await calls.round('init');
    const next = set.next?.pin as string;
    expect(set.trustedPins()).toEqual([old, next]);
    await waitFor(() => [...agents, awayFromUpdateClients].every((agent) => trusts(agent).join(',') === `${old},${next}`), {
      what: 'every agent trusting both CAs',
      timeoutMs: 30_000,
    });
    await fleet.stopAgent(awayFromUpdateClients);

    await step('update-clients');
    await calls.round('update-clients');
    await waitFor(async () => ((await caState(fleet)).byCa.get(next) ?? []).length === FLEET, {
      what: 'every connected agent renewed under the next CA',
      timeoutMs: 60_000,
    });

    await step('update-servers');
    await waitFor(() => fleet.broker.serving.current.caPin === next, { what: 'the broker serving a certificate of the next CA' });
    await calls.round('update-servers');
    // Back with its old certificate and trusting only the old CA: it verifies the broker through the cross certificate, then renews.
    const back = await fleet.addAgent('back-in-update-servers', { newKeys });
    await waitFor(async () => ((await caState(fleet)).byCa.get(next) ?? []).includes('back-in-update-servers'), {
      what: 'the returning agent renewed under the next CA',
    });
    // Enrolled now with the pin token create prints: the old one, at the end of the served chain.
    const newcomer = await fleet.addAgent('newcomer', { newKeys });
    expect(trusts(newcomer)).toEqual([old, next]);

    // Two agents are away on certificates of the old CA: standby names them, and goes ahead when forced.
    await expect(step('standby')).rejects.toThrow(
      /2 agents still hold a certificate of CA sha256:\w+, which the rotation retires: away-from-update-clients, away-throughout/,
    );
    set = await rotateCa(fleet.broker.store, 'standby', { dataDir: fleet.broker.options.dataDir, force: true });
    expect(set.active.pin).toBe(next);
    expect(set.trustedPins()).toEqual([next]);
    const everyone = [...agents, back, newcomer];
    await waitFor(
      () =>
        everyone.every((agent) => {
          const session = fleet.broker.registry.find(agent.connection.currentIdentity.name)?.session as { streamCaPin?: string } | undefined;
          return agent.connection.connected && session?.streamCaPin === next && trusts(agent).join(',') === next;
        }),
      { what: 'every agent reconnected with a certificate of the new CA, trusting only it', timeoutMs: 90_000 },
    );
    await calls.round('standby');
    const result = await calls.stop();
    expect(result.lost).toEqual([]);
    expect(result.phases).toEqual(['init', 'standby', 'update-clients', 'update-servers']);
    expect(result.answers).toBeGreaterThanOrEqual(FLEET * result.rounds);

    const status = await runFleetmesh(['ca', 'status', '--data-dir', fleet.broker.options.dataDir, '--output', 'json']);
    expect(status.code).toBe(0);
    const cas = (JSON.parse(status.stdout) as { phase: string; cas: { pin: string; state: string; agents: string[] }[] }).cas;
    expect(JSON.parse(status.stdout)).toMatchObject({ phase: 'standby', enrollment_pins: [next] });
    expect(cas.find((ca) => ca.pin === next)).toMatchObject({ state: 'active' });
    expect(cas.find((ca) => ca.pin === next)?.agents).toHaveLength(FLEET + 2);
    expect(cas.find((ca) => ca.pin === old)).toMatchObject({ state: 'retired' });

    // It trusts both CAs but holds a certificate of the retired one: the broker tells it in words, and it stops.
    const missed = captureLogger();
    const late = await fleet.addAgent('away-from-update-clients', { newKeys, log: missed.log, waitOnline: false });
    const fatal = await late.connection.fatal;
    expect(fatal.message).toMatch(/issued by CA sha256:\w+, which this fleet no longer trusts: the CA was rotated out/);
    expect(fatal.hint).toMatch(/CA was rotated while this agent was away/);
    // It trusts only the retired CA: the broker's certificate does not verify, and its log says why.
    const lost = captureLogger();
    await fleet.addAgent('away-throughout', { newKeys, log: lost.log, waitOnline: false });
    await waitFor(() => lost.lines.some((line) => /CA was rotated while this agent was away/.test(String(line.hint))), {
      what: 'the agent saying in its log why it cannot connect',
    });
    expect(readFileSync(join(fleet.agentDir('away-throughout'), 'ca.crt'), 'utf8')).toContain('BEGIN CERTIFICATE');
  }, 420_000);
});

describe('a CA rotation rolled back from update-servers', () => {
  let fleet: TestFleet;
  const agents: Agent[] = [];

  beforeAll(async () => {
    const newKeys = await keyPool(2);
    fleet = await startTestFleet({ heartbeatIntervalMs: 1000 });
    for (let i = 0; i < 4; i++) agents.push(await fleet.addAgent(`rb-${i}`, { newKeys }));
  });

  afterAll(async () => {
    await fleet?.stop();
  });

  it('returns every agent and the broker to the old CA, and drops the next one', async () => {
    const dataDir = fleet.broker.options.dataDir;
    const old = fleet.broker.authority.pin;
    const next = (await rotateCa(fleet.broker.store, 'init', { dataDir })).next?.pin as string;
    await rotateCa(fleet.broker.store, 'update-clients', { dataDir });
    await waitFor(async () => ((await caState(fleet)).byCa.get(next) ?? []).length === 4, { what: 'every agent on the next CA' });
    await rotateCa(fleet.broker.store, 'update-servers', { dataDir });
    await waitFor(() => fleet.broker.serving.current.caPin === next, { what: 'the broker serving from the next CA' });

    expect((await rotateCa(fleet.broker.store, 'rollback', { dataDir })).phase).toBe('rollback');
    await waitFor(() => fleet.broker.serving.current.caPin === old, { what: 'the broker serving from the old CA again' });
    await waitFor(async () => ((await caState(fleet)).byCa.get(old) ?? []).length === 4, { what: 'every agent back on the old CA' });
    const set = await rotateCa(fleet.broker.store, 'standby', { dataDir });
    expect(set.active.pin).toBe(old);
    expect(set.trustedPins()).toEqual([old]);
    expect(set.rows.find((row) => row.pin === next)?.state).toBe('retired');
    await waitFor(
      () =>
        agents.every((agent) => {
          const session = fleet.broker.registry.find(agent.connection.currentIdentity.name)?.session as { streamCaPin?: string } | undefined;
          return agent.connection.connected && session?.streamCaPin === old && trusts(agent).join(',') === old;
        }),
      { what: 'every agent on a stream of the old CA, trusting only it', timeoutMs: 60_000 },
    );
  }, 120_000);
});

describe('certificates renewed while the broker runs', () => {
  let fleet: TestFleet;

  afterAll(async () => {
    await fleet?.stop();
  });

  it("keeps taking agents back past its first serving certificate's lifetime, and shows expiry and renewals in /metrics and fleetmesh agents", async () => {
    fleet = await startTestFleet({ serverCertTtlMs: 3000, agentCertTtlMs: 3000 });
    const first = fleet.broker.serving.current;
    const agent = await fleet.addAgent('short-lived');
    const enrolledSerial = agent.connection.currentIdentity.serial;
    await waitFor(() => Date.now() > first.notAfter.getTime() + 500 && fleet.broker.serving.renewals >= 2, {
      what: 'the first serving certificate expired and renewed',
      timeoutMs: 20_000,
    });
    await waitFor(() => agent.connection.currentIdentity.serial !== enrolledSerial, { what: 'the agent renewed its certificate' });
    // A new stream: TLS now verifies a serving certificate the broker issued itself while it ran.
    await fleet.stopAgent(agent);
    const again = await fleet.addAgent('short-lived');
    expect(again.connection.connected).toBe(true);
    expect(fleet.broker.serving.current.notAfter.getTime()).toBeGreaterThan(first.notAfter.getTime());

    const metrics = await (await fetch(new URL('/metrics', fleet.broker.mcpUrl))).text();
    const renewals = Number(/^fleetmesh_server_certificate_renewals_total (\d+)$/m.exec(metrics)?.[1]);
    expect(renewals).toBeGreaterThanOrEqual(2);
    const expiry = Number(/^fleetmesh_server_certificate_expiry_timestamp_seconds\{ca="sha256:\w+"\} (\d+)$/m.exec(metrics)?.[1]);
    expect(expiry * 1000).toBeGreaterThan(Date.now() - 1000);
    expect(metrics).toMatch(/^fleetmesh_agent_certificate_renewals_total [1-9]\d*$/m);
    expect(metrics).toMatch(/^fleetmesh_ca_rotation_phase\{phase="standby"\} 1$/m);

    const listed = await runFleetmesh(['agents', '--data-dir', fleet.broker.options.dataDir, '--output', 'json']);
    const row = (JSON.parse(listed.stdout) as { agents: Record<string, unknown>[] }).agents.find((candidate) => candidate.name === 'short-lived');
    expect(row).toMatchObject({ certificate_ca_pin: fleet.broker.authority.pin });
    expect(Number(row?.certificate_issued_at_unix_ms)).toBeGreaterThan(Number(row?.enrolled_at_unix_ms));
  }, 60_000);
});

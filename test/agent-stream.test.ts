import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { enrollAgent } from '../agent/enrollment/enroll-agent.ts';
import type { FleetError } from '../shared/errors/fleet-error.ts';
import { readCertificate } from '../shared/pki/certificates.ts';
import { CliProcess, runFleetmesh } from './harness/cli-process.ts';
import { openRawStream } from './harness/raw-stream.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { nextEvent, waitFor } from './harness/wait.ts';

describe('the agent stream', () => {
  const processes: CliProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
  });

  // One broker for the cases that need no broker options of their own: each names its own agents.
  describe('on a shared broker', () => {
    let fleet: TestFleet;
    beforeAll(async () => {
      fleet = await startTestFleet();
    });
    afterAll(async () => {
      await fleet?.stop();
    });

    it('takes identity from the certificate, not from what the agent says', async () => {
      const agent = await fleet.addAgent('truthful');
      await fleet.stopAgent(agent);
      const identity = agent.connection.currentIdentity;
      const raw = openRawStream(fleet.address, identity);
      // The Hello of a raw stream names no one; the broker still knows who it is.
      await waitFor(() => raw.frames.find((f) => f.frame.case === 'welcome'));
      const welcome = raw.frames.find((f) => f.frame.case === 'welcome');
      expect(welcome?.frame.case === 'welcome' && welcome.frame.value.name).toBe('truthful');
      expect(fleet.broker.registry.find('truthful')?.state).toBe('online');
      raw.close();
    });

    it('replaces an earlier stream of the same agent with a newer one', async () => {
      const agent = await fleet.addAgent('twice');
      await fleet.stopAgent(agent);
      const identity = agent.connection.currentIdentity;
      const first = openRawStream(fleet.address, identity);
      await waitFor(() => first.frames.some((f) => f.frame.case === 'welcome'));
      const second = openRawStream(fleet.address, identity);
      const firstStatus = await first.status;
      expect(firstStatus.code).toBe(grpc.status.ABORTED);
      expect(firstStatus.details).toMatch(/replaced by a newer stream/);
      await waitFor(() => second.frames.some((f) => f.frame.case === 'welcome'));
      expect(fleet.broker.registry.find('twice')?.state).toBe('online');
      first.close();
      second.close();
    });

    it('carries a system sample in every heartbeat', async () => {
      await fleet.addAgent('sampled');
      // Figures are null until the agent's sampler has its first reading, then numbers.
      const host = await waitFor(() => (fleet.broker.registry.find('sampled')?.sample?.memory_total_bytes ? fleet.broker.registry.find('sampled') : undefined));
      expect(host.sample?.memory_total_bytes).toBeGreaterThan(0);
      expect(host.sample?.memory_percent).toBeGreaterThan(0);
      expect(host.sample?.disk_mount).toBeTruthy();
      expect(typeof host.sample?.load_1).toBe('number');
      // No Docker collector yet: container counts are unknown (null), never 0.
      expect(host.sample?.containers_running).toBeNull();
    });

    it('marks a silent agent stale after three missed heartbeats, then offline when its stream goes', async () => {
      const agent = new CliProcess(await fleet.agentArgs('quiet'));
      processes.push(agent);
      const states: string[] = [];
      fleet.broker.registry.on('state', (host) => {
        if (host.name === 'quiet') states.push(host.state);
      });
      await waitFor(() => fleet.broker.registry.find('quiet')?.state === 'online', { what: 'quiet online' });
      agent.signal('SIGSTOP');
      await waitFor(() => fleet.broker.registry.find('quiet')?.state === 'stale', { what: 'quiet stale' });
      agent.signal('SIGKILL');
      await waitFor(() => fleet.broker.registry.find('quiet')?.state === 'offline', { what: 'quiet offline' });
      expect(states).toEqual(['online', 'stale', 'offline']);
    });

    it("closes a revoked agent's live stream at once, and the agent cannot come back", async () => {
      const dataDir = fleet.agentDir('doomed');
      const agent = new CliProcess(await fleet.agentArgs('doomed'));
      processes.push(agent);
      await waitFor(() => fleet.broker.registry.find('doomed')?.state === 'online', { what: 'doomed online' });

      const revoke = await runFleetmesh(['revoke', 'doomed', '--data-dir', fleet.broker.options.dataDir]);
      expect(revoke.code).toBe(0);
      expect(revoke.stdout).toMatch(/revoked agent doomed/);
      // The broker notices the store change, closes the stream, and the agent stops for good.
      expect(await agent.exited).toBe(3);
      expect(agent.stderr).toMatch(/refused this agent: agent doomed has been revoked|was revoked/);
      expect(fleet.broker.registry.find('doomed')).toBeUndefined();

      // Started again from its data dir, it is refused and stops; meanwhile the agent list shows it revoked.
      const retry = new CliProcess(['agent', '--broker', fleet.address, '--data-dir', dataDir]);
      processes.push(retry);
      const [code, listed] = await Promise.all([retry.exited, runFleetmesh(['agents', '--data-dir', fleet.broker.options.dataDir, '--all'])]);
      expect(code).toBe(3);
      expect(retry.stderr).toMatch(/was revoked/);
      expect(listed.stdout).toMatch(/doomed\s+revoked/);
    });

    it('refuses a stream whose failure is final instead of retrying in a loop', async () => {
      const agent = await fleet.addAgent('loop');
      const fatal = nextEvent<[FleetError]>(agent.connection, 'fatal');
      fleet.broker.registry.revoke(agent.connection.currentIdentity.agentId, 'test');
      const [error] = await fatal;
      expect(error.code).toBe('forbidden');
    });
  });

  describe('on a broker of its own', () => {
    let fleet: TestFleet;
    afterEach(async () => {
      await fleet?.stop();
    });

    it('stops an agent whose certificate expired with a clear line, or re-enrolls it when it has a token', async () => {
      fleet = await startTestFleet({ agentCertTtlMs: 1500 });
      const dataDir = fleet.agentDir('brief');
      const identity = await enrollAgent({ brokerAddress: fleet.address, token: await fleet.token(), caPin: fleet.pin, name: 'brief', dataDir });
      await waitFor(() => identity.notAfter.getTime() < Date.now() - 1000, { what: 'certificate expiry' });

      const stuck = new CliProcess(['agent', '--broker', fleet.address, '--data-dir', dataDir]);
      processes.push(stuck);
      expect(await stuck.exited).toBe(3);
      expect(stuck.stderr).toMatch(/certificate expired at .*enroll again/is);

      // With a token at hand it enrolls again, keeping its id and name.
      const renewed = await fleet.addAgent('brief', { token: await fleet.token() });
      expect(renewed.connection.currentIdentity.agentId).toBe(identity.agentId);
      expect((await fleet.broker.store.agents.list()).map((a) => a.name)).toEqual(['brief']);
    });

    it('reconnects every agent by itself, with the same identity, after a broker restart', async () => {
      fleet = await startTestFleet();
      const a = await fleet.addAgent('a');
      const b = await fleet.addAgent('b');
      const ids = [a.connection.currentIdentity.agentId, b.connection.currentIdentity.agentId];
      const reconnected = Promise.all([nextEvent(a.connection, 'connected'), nextEvent(b.connection, 'connected')]);
      await fleet.restartBroker();
      await reconnected;
      const hosts = fleet.broker.registry.list();
      expect(hosts.map((h) => [h.name, h.state])).toEqual([
        ['a', 'online'],
        ['b', 'online'],
      ]);
      expect(hosts.map((h) => h.id)).toEqual(ids);
    });

    it('renews its certificate over the live stream without dropping a call in flight', async () => {
      fleet = await startTestFleet({ agentCertTtlMs: 4000 });
      const agent = await fleet.addAgent('renewing');
      const before = agent.connection.currentIdentity.serial;
      const host = fleet.broker.registry.find('renewing');
      if (!host) throw new Error('host not registered');
      const chunks: unknown[] = [];
      const renewed = nextEvent(agent.connection, 'renewed');
      // A call streaming for 3 s spans the renewal (between 2 s and 2.7 s into a 4 s life).
      const [outcome] = await fleet.broker.fanOut([host], {
        action: 'agent.info',
        params: { watch_ms: 3000, interval_ms: 250 },
        timeoutMs: 10_000,
        caller: 'test',
        onChunk: (_host, payload) => chunks.push(payload),
      });
      await renewed;
      expect(outcome?.outcome.ok).toBe(true);
      // Samples kept streaming (how many fit in 3 s depends on the machine's load).
      expect(chunks.length).toBeGreaterThan(1);
      const after = agent.connection.currentIdentity.serial;
      expect(after).not.toBe(before);
      expect(readCertificate(readFileSync(join(agent.options.dataDir, 'agent.crt'), 'utf8')).serial).toBe(after);
      expect((await fleet.broker.store.certificates.get(after))?.issuedBy).toBe('renew');
      expect(fleet.broker.registry.find('renewing')?.state).toBe('online');
    });
  });
});

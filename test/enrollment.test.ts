import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { enrollAgent } from '../agent/enrollment/enroll-agent.ts';
import { loadIdentity } from '../agent/identity/agent-identity.ts';
import { FleetError } from '../shared/errors/fleet-error.ts';
import { certificatePin, createCertificateAuthority, createKeyPair, issueServerCertificate } from '../shared/pki/certificates.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

function tokenUses(fleet: TestFleet, token: string): number | undefined {
  return fleet.broker.store.tokens.get(token.split('.')[1] ?? '')?.uses;
}

describe('enrollment', () => {
  let fleet: TestFleet;
  beforeEach(async () => {
    fleet = await startTestFleet();
  });
  afterEach(async () => {
    await fleet.stop();
  });

  it('enrolls and connects two agents with different names, both online', async () => {
    const web = await fleet.addAgent('web-1');
    const db = await fleet.addAgent('db-1', { labels: { role: 'db' } });
    const hosts = fleet.broker.registry.list();
    expect(hosts.map((h) => [h.name, h.state])).toEqual([
      ['db-1', 'online'],
      ['web-1', 'online'],
    ]);
    expect(hosts.find((h) => h.name === 'db-1')?.labels).toEqual({ role: 'db' });
    expect(web.connection.currentIdentity.agentId).not.toBe(db.connection.currentIdentity.agentId);
    // The private key never left the agent: the broker stored only its fingerprint.
    const row = fleet.broker.store.agents.get(web.connection.currentIdentity.agentId);
    expect(row?.publicKeySha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain('PRIVATE KEY');
  });

  it('gives token labels precedence over labels the agent reports', async () => {
    const token = fleet.token({ labels: { env: 'prod', role: 'web' } });
    await fleet.addAgent('web-2', { token, labels: { role: 'cache', zone: 'a' } });
    expect(fleet.broker.registry.find('web-2')?.labels).toEqual({ env: 'prod', role: 'web', zone: 'a' });
  });

  it('refuses a wrong CA pin without sending the token, leaving nothing enrolled', async () => {
    const token = fleet.token();
    const wrongPin = `sha256:${'0'.repeat(64)}`;
    const dataDir = fleet.agentDir('bad-pin');
    const failure = await enrollAgent({ brokerAddress: fleet.address, token, caPin: wrongPin, name: 'bad-pin', dataDir }).catch((e: FleetError) => e);
    expect(failure).toBeInstanceOf(FleetError);
    expect((failure as FleetError).message).toMatch(/does not present the CA pinned.*the join token was not sent/);
    expect(tokenUses(fleet, token)).toBe(0);
    expect(existsSync(dataDir)).toBe(false);
    expect(fleet.broker.store.agents.list()).toEqual([]);
  });

  it('never sends the token to an impostor whose CA does not match the pin', async () => {
    // A TLS server with a CA of its own, recording every byte it receives.
    const impostorCa = await createCertificateAuthority({ commonName: 'impostor', lifetimeMs: 86_400_000 });
    const keys = await createKeyPair();
    const cert = issueServerCertificate(impostorCa, { publicKeyPem: keys.publicKeyPem, names: ['localhost', '127.0.0.1'], lifetimeMs: 86_400_000 });
    const received: Buffer[] = [];
    const server: Server = createServer({ key: keys.privateKeyPem, cert: cert.certificatePem + impostorCa.certificatePem, ALPNProtocols: ['h2'] }, (socket) => {
      socket.on('data', (data: Buffer) => received.push(data));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const token = fleet.token();
      const failure = await enrollAgent({
        brokerAddress: `localhost:${port}`,
        token,
        caPin: fleet.pin,
        name: 'victim',
        dataDir: fleet.agentDir('victim'),
      }).catch((e: FleetError) => e);
      expect((failure as FleetError).message).toContain('the join token was not sent');
      expect(Buffer.concat(received).toString('latin1')).not.toContain(token.split('.')[2]);
      // And the impostor's own pin would not have fooled a check either.
      expect(certificatePin(impostorCa.certificatePem)).not.toBe(fleet.pin);
    } finally {
      server.close();
    }
  });

  it('refuses an expired token', async () => {
    const token = fleet.token({ ttlMs: 1, now: Date.now() - 1000 });
    const failure = await enrollAgent({ brokerAddress: fleet.address, token, caPin: fleet.pin, name: 'late', dataDir: fleet.agentDir('late') }).catch(
      (e: FleetError) => e,
    );
    expect((failure as FleetError).code).toBe('forbidden');
    expect((failure as FleetError).message).toMatch(/join token \w+ expired at/);
    expect(existsSync(fleet.agentDir('late'))).toBe(false);
    expect(fleet.broker.store.agents.list()).toEqual([]);
  });

  it('refuses a single-use token the second time', async () => {
    const token = fleet.token();
    await enrollAgent({ brokerAddress: fleet.address, token, caPin: fleet.pin, name: 'first', dataDir: fleet.agentDir('first') });
    const failure = await enrollAgent({ brokerAddress: fleet.address, token, caPin: fleet.pin, name: 'second', dataDir: fleet.agentDir('second') }).catch(
      (e: FleetError) => e,
    );
    expect((failure as FleetError).message).toMatch(/has been used already/);
    expect(existsSync(fleet.agentDir('second'))).toBe(false);
    expect(fleet.broker.store.agents.list().map((a) => a.name)).toEqual(['first']);
    expect(tokenUses(fleet, token)).toBe(1);
  });

  it('lets a reusable token enroll many agents, and a --uses N token N agents', async () => {
    const reusable = fleet.token({ uses: null });
    for (const name of ['r1', 'r2', 'r3'])
      await enrollAgent({ brokerAddress: fleet.address, token: reusable, caPin: fleet.pin, name, dataDir: fleet.agentDir(name) });
    const two = fleet.token({ uses: 2 });
    await enrollAgent({ brokerAddress: fleet.address, token: two, caPin: fleet.pin, name: 'n1', dataDir: fleet.agentDir('n1') });
    await enrollAgent({ brokerAddress: fleet.address, token: two, caPin: fleet.pin, name: 'n2', dataDir: fleet.agentDir('n2') });
    await expect(enrollAgent({ brokerAddress: fleet.address, token: two, caPin: fleet.pin, name: 'n3', dataDir: fleet.agentDir('n3') })).rejects.toThrow(
      /used 2 times/,
    );
    expect(fleet.broker.store.agents.list().map((a) => a.name)).toEqual(['n1', 'n2', 'r1', 'r2', 'r3']);
  });

  it('refuses a name another agent holds, and keeps the name of an agent re-enrolling from its own data dir', async () => {
    await enrollAgent({ brokerAddress: fleet.address, token: fleet.token(), caPin: fleet.pin, name: 'web', dataDir: fleet.agentDir('web') });
    const clash = await enrollAgent({
      brokerAddress: fleet.address,
      token: fleet.token(),
      caPin: fleet.pin,
      name: 'web',
      dataDir: fleet.agentDir('other'),
    }).catch((e: FleetError) => e);
    expect((clash as FleetError).code).toBe('conflict');
    expect((clash as FleetError).message).toContain('belongs to another enrolled agent');
    expect(existsSync(fleet.agentDir('other'))).toBe(false);

    // The original agent, re-enrolling from its own data dir (same key), keeps its id and name.
    const previous = loadIdentity(fleet.agentDir('web'));
    if (!previous) throw new Error('no identity written');
    const again = await enrollAgent({
      brokerAddress: fleet.address,
      token: fleet.token(),
      caPin: fleet.pin,
      name: 'web',
      dataDir: fleet.agentDir('web'),
      previous: { agentId: previous.agentId, privateKeyPem: previous.privateKeyPem },
    });
    expect(again.agentId).toBe(previous.agentId);
    expect(again.name).toBe('web');
    expect(fleet.broker.store.agents.list().map((a) => a.name)).toEqual(['web']);
  });

  it('refuses a server certificate that does not match the name dialled, without using the token', async () => {
    // A broker on every loopback address whose certificate names localhost and 127.0.0.1, dialled as 127.0.0.2.
    const wide = await startTestFleet({ grpcListen: '0.0.0.0:0' });
    try {
      const token = wide.token();
      const address = wide.address.replace('localhost', '127.0.0.2');
      const failure = await enrollAgent({ brokerAddress: address, token, caPin: wide.pin, name: 'mismatch', dataDir: wide.agentDir('mismatch') }).catch(
        (e: FleetError) => e,
      );
      expect(failure).toBeInstanceOf(FleetError);
      expect(`${(failure as FleetError).message} ${(failure as FleetError).hint}`).toMatch(/does not name "127.0.0.2"/);
      expect(tokenUses(wide, token)).toBe(0);
      expect(existsSync(wide.agentDir('mismatch'))).toBe(false);
    } finally {
      await wide.stop();
    }
  });

  it('writes the CA key and the agent key with mode 0600', async () => {
    const agent = await fleet.addAgent('perm');
    const { statSync } = await import('node:fs');
    const { join } = await import('node:path');
    expect(statSync(join(fleet.broker.options.dataDir, 'ca.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(agent.options.dataDir, 'agent.key')).mode & 0o777).toBe(0o600);
    expect(readdirSync(agent.options.dataDir).sort()).toEqual(['agent.crt', 'agent.json', 'agent.key', 'ca.crt']);
  });
});

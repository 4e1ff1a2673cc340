import { existsSync, readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.ts';
import { enrollAgent } from '../agent/enrollment/enroll-agent.ts';
import { loadIdentity } from '../agent/identity/agent-identity.ts';
import { FleetError } from '../shared/errors/fleet-error.ts';
import {
  certificatePin,
  createCertificateAuthority,
  createKeyPair,
  issueAgentCertificate,
  issueServerCertificate,
  publicKeyFingerprint,
  readCertificate,
} from '../shared/pki/certificates.ts';
import { captureLogger } from './harness/capture-logger.ts';
import { openRawStream, type RawEnrollOutcome, rawEnroll } from './harness/raw-stream.ts';
import { TEST_AGENT_DEFAULTS } from './harness/test-agent-defaults.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

async function tokenUses(fleet: TestFleet, token: string): Promise<number | undefined> {
  return (await fleet.broker.store.tokens.get(token.split('.')[1] ?? ''))?.uses;
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
    const row = await fleet.broker.store.agents.get(web.connection.currentIdentity.agentId);
    expect(row?.publicKeySha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain('PRIVATE KEY');
  });

  it('gives token labels precedence over labels the agent reports', async () => {
    const token = await fleet.token({ labels: { env: 'prod', role: 'web' } });
    await fleet.addAgent('web-2', { token, labels: { role: 'cache', zone: 'a' } });
    expect(fleet.broker.registry.find('web-2')?.labels).toEqual({ env: 'prod', role: 'web', zone: 'a' });
  });

  it('lets a reusable token enroll many agents, and a --uses N token N agents', async () => {
    const reusable = await fleet.token({ uses: null });
    for (const name of ['r1', 'r2', 'r3'])
      await enrollAgent({ brokerAddress: fleet.address, token: reusable, caPin: fleet.pin, name, dataDir: fleet.agentDir(name) });
    const two = await fleet.token({ uses: 2 });
    await enrollAgent({ brokerAddress: fleet.address, token: two, caPin: fleet.pin, name: 'n1', dataDir: fleet.agentDir('n1') });
    await enrollAgent({ brokerAddress: fleet.address, token: two, caPin: fleet.pin, name: 'n2', dataDir: fleet.agentDir('n2') });
    await expect(enrollAgent({ brokerAddress: fleet.address, token: two, caPin: fleet.pin, name: 'n3', dataDir: fleet.agentDir('n3') })).rejects.toThrow(
      /used 2 times/,
    );
    expect((await fleet.broker.store.agents.list()).map((a) => a.name)).toEqual(['n1', 'n2', 'r1', 'r2', 'r3']);
  });

  it('refuses a name another agent holds, and keeps the name of an agent re-enrolling from its own data dir', async () => {
    await enrollAgent({ brokerAddress: fleet.address, token: await fleet.token(), caPin: fleet.pin, name: 'web', dataDir: fleet.agentDir('web') });
    const clash = await enrollAgent({
      brokerAddress: fleet.address,
      token: await fleet.token(),
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
      token: await fleet.token(),
      caPin: fleet.pin,
      name: 'web',
      dataDir: fleet.agentDir('web'),
      previous: { agentId: previous.agentId, privateKeyPem: previous.privateKeyPem },
    });
    expect(again.agentId).toBe(previous.agentId);
    expect(again.name).toBe('web');
    expect((await fleet.broker.store.agents.list()).map((a) => a.name)).toEqual(['web']);
  });

  it('gives an agent that asks again with the same key, its first answer lost, the same identity without spending another use', async () => {
    const token = await fleet.token();
    const keys = await createKeyPair();
    const options = { brokerAddress: fleet.address, token, caPin: fleet.pin, name: 'lost', dataDir: fleet.agentDir('lost'), keys };
    const first = await enrollAgent(options);
    const again = await enrollAgent(options);
    expect(again.agentId).toBe(first.agentId);
    expect(await tokenUses(fleet, token)).toBe(1);
    // Another key under that name is another agent, still refused.
    const other = await enrollAgent({ ...options, token: await fleet.token(), keys: await createKeyPair(), dataDir: fleet.agentDir('other') }).catch(
      (e: FleetError) => e,
    );
    expect((other as FleetError).code).toBe('conflict');
  });

  it('enrolls an agent started before its broker listens, once it does, logging each retry', async () => {
    const token = await fleet.token();
    await fleet.broker.stop();
    const { log, lines } = captureLogger();
    const agent = Agent.start(
      { dataDir: fleet.agentDir('early-1'), brokerAddress: fleet.address, token, caPin: fleet.pin, name: 'early-1', ...TEST_AGENT_DEFAULTS },
      log,
      [],
    );
    const retries = () => lines.filter((line) => line.message === 'could not enroll yet; retrying');
    await waitFor(() => retries().length >= 3, { what: 'three enrolment retries while no broker listens' });
    expect(retries()[0]).toMatchObject({ attempt: 1, reason: expect.stringMatching(/cannot reach the broker/) });
    await fleet.restartBroker();
    const enrolled = await agent;
    try {
      await waitFor(() => fleet.broker.registry.find('early-1')?.state === 'online', { what: 'early-1 online' });
      expect(lines.some((line) => line.message === 'enrolled')).toBe(true);
    } finally {
      await enrolled.stop();
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

/** How a refused attempt ended, as one line: a gRPC status or a FleetError. */
function outcomeOf(failure: unknown): string {
  if (failure instanceof FleetError) return `${failure.code}: ${failure.message} ${failure.hint}`;
  const status = failure as grpc.StatusObject;
  return `grpc ${grpc.status[status.code]}: ${status.details}`;
}

async function streamOutcome(fleet: TestFleet, credentials: Parameters<typeof openRawStream>[1]): Promise<string> {
  const raw = openRawStream(fleet.address, credentials);
  const status = await raw.status;
  raw.close();
  return outcomeOf(status);
}

async function enrollOutcome(options: Parameters<typeof enrollAgent>[0]): Promise<string> {
  const identity = await enrollAgent(options).catch((error: unknown) => error);
  return identity instanceof FleetError ? outcomeOf(identity) : 'enrolled';
}

interface RefusalCase {
  name: string;
  attempt(fleet: TestFleet): Promise<string>;
  refused: RegExp;
  /** What must still hold after the refusal. */
  afterwards?(fleet: TestFleet): void | Promise<void>;
}

const REFUSALS: RefusalCase[] = [
  {
    name: 'a stream without a client certificate',
    attempt: (fleet) => streamOutcome(fleet, { caCertificatePem: fleet.broker.authority.ca.certificatePem }),
    refused: /^grpc UNAUTHENTICATED: a valid client certificate issued by this broker is required/,
  },
  {
    name: 'a client certificate from another CA naming a real agent',
    async attempt(fleet) {
      const otherCa = await createCertificateAuthority({ commonName: 'other', lifetimeMs: 86_400_000 });
      const keys = await createKeyPair();
      const agentId = fleet.broker.registry.find('real')?.id ?? '';
      const forged = issueAgentCertificate(otherCa, { publicKeyPem: keys.publicKeyPem, agentId, name: 'real', lifetimeMs: 86_400_000 });
      return streamOutcome(fleet, {
        caCertificatePem: fleet.broker.authority.ca.certificatePem,
        privateKeyPem: keys.privateKeyPem,
        certificatePem: forged.certificatePem,
      });
    },
    refused: /^grpc UNAUTHENTICATED/,
    afterwards: (fleet) => expect(fleet.broker.registry.find('real')?.state).toBe('online'),
  },
  {
    name: "a server certificate (serverAuth only) issued by the broker's own CA",
    async attempt(fleet) {
      const keys = await createKeyPair();
      const server = issueServerCertificate(fleet.broker.authority.ca, {
        publicKeyPem: keys.publicKeyPem,
        names: ['real', 'localhost'],
        lifetimeMs: 86_400_000,
      });
      return streamOutcome(fleet, {
        caCertificatePem: fleet.broker.authority.ca.certificatePem,
        privateKeyPem: keys.privateKeyPem,
        certificatePem: server.certificatePem,
      });
    },
    refused: /^grpc UNAUTHENTICATED: .*client certificate/,
    afterwards: (fleet) => expect(fleet.broker.registry.find('real')?.state).toBe('online'),
  },
  {
    name: 'the certificate of a revoked agent',
    async attempt(fleet) {
      const identity = await enrollAgent({
        brokerAddress: fleet.address,
        token: await fleet.token(),
        caPin: fleet.pin,
        name: 'revoked',
        dataDir: fleet.agentDir('revoked'),
      });
      fleet.broker.registry.revoke(identity.agentId, 'test');
      return streamOutcome(fleet, identity);
    },
    refused: /^grpc PERMISSION_DENIED: the certificate of agent revoked was revoked at/,
    afterwards: (fleet) => expect(fleet.broker.registry.find('revoked')).toBeUndefined(),
  },
  {
    name: 'an expired certificate the broker issued',
    async attempt(fleet) {
      const identity = await enrollAgent({
        brokerAddress: fleet.address,
        token: await fleet.token(),
        caPin: fleet.pin,
        name: 'expired',
        dataDir: fleet.agentDir('expired'),
      });
      const publicKeyPem = readCertificate(identity.certificatePem).publicKeyPem;
      const now = Date.now() - 2 * 86_400_000;
      const old = issueAgentCertificate(fleet.broker.authority.ca, { publicKeyPem, agentId: identity.agentId, name: 'expired', lifetimeMs: 86_400_000, now });
      await fleet.broker.store.certificates.insert({
        serial: old.serial,
        agentId: identity.agentId,
        issuedAt: now,
        notBefore: old.notBefore.getTime(),
        notAfter: old.notAfter.getTime(),
        publicKeySha256: publicKeyFingerprint(publicKeyPem),
        issuedBy: 'enroll',
        caPin: fleet.pin,
      });
      return streamOutcome(fleet, { ...identity, certificatePem: old.certificatePem });
    },
    refused: /^grpc UNAUTHENTICATED/,
  },
  {
    name: 'a wrong CA pin (the token is never sent)',
    async attempt(fleet) {
      const token = await fleet.token();
      const outcome = await enrollOutcome({
        brokerAddress: fleet.address,
        token,
        caPin: `sha256:${'0'.repeat(64)}`,
        name: 'bad-pin',
        dataDir: fleet.agentDir('bad-pin'),
      });
      expect(await tokenUses(fleet, token)).toBe(0);
      return outcome;
    },
    refused: /does not present the CA pinned.*the join token was not sent/,
    afterwards: (fleet) => expect(existsSync(fleet.agentDir('bad-pin'))).toBe(false),
  },
  {
    name: 'an impostor whose CA does not match the pin (it never sees the token)',
    async attempt(fleet) {
      const impostorCa = await createCertificateAuthority({ commonName: 'impostor', lifetimeMs: 86_400_000 });
      const keys = await createKeyPair();
      const cert = issueServerCertificate(impostorCa, { publicKeyPem: keys.publicKeyPem, names: ['localhost', '127.0.0.1'], lifetimeMs: 86_400_000 });
      const received: Buffer[] = [];
      const server: Server = createServer(
        { key: keys.privateKeyPem, cert: cert.certificatePem + impostorCa.certificatePem, ALPNProtocols: ['h2'] },
        (socket) => {
          socket.on('data', (data: Buffer) => received.push(data));
          socket.on('error', () => {});
        },
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const token = await fleet.token();
      try {
        const port = (server.address() as { port: number }).port;
        const outcome = await enrollOutcome({ brokerAddress: `localhost:${port}`, token, caPin: fleet.pin, name: 'victim', dataDir: fleet.agentDir('victim') });
        expect(Buffer.concat(received).toString('latin1')).not.toContain(token.split('.')[2]);
        expect(certificatePin(impostorCa.certificatePem)).not.toBe(fleet.pin);
        return outcome;
      } finally {
        server.close();
      }
    },
    refused: /the join token was not sent/,
  },
  {
    name: 'an expired join token',
    attempt: async (fleet) =>
      enrollOutcome({
        brokerAddress: fleet.address,
        token: await fleet.token({ ttlMs: 1, now: Date.now() - 1000 }),
        caPin: fleet.pin,
        name: 'late',
        dataDir: fleet.agentDir('late'),
      }),
    refused: /^forbidden: enrollment refused: join token \w+ expired at/,
    async afterwards(fleet) {
      expect(existsSync(fleet.agentDir('late'))).toBe(false);
      expect(await fleet.broker.store.agents.findLiveByName('late')).toBeUndefined();
    },
  },
  {
    name: 'a single-use join token used a second time',
    async attempt(fleet) {
      const token = await fleet.token();
      await enrollAgent({ brokerAddress: fleet.address, token, caPin: fleet.pin, name: 'first', dataDir: fleet.agentDir('first') });
      const outcome = await enrollOutcome({ brokerAddress: fleet.address, token, caPin: fleet.pin, name: 'second', dataDir: fleet.agentDir('second') });
      expect(await tokenUses(fleet, token)).toBe(1);
      return outcome;
    },
    refused: /^forbidden: enrollment refused: join token \w+ has been used already/,
    async afterwards(fleet) {
      expect(existsSync(fleet.agentDir('second'))).toBe(false);
      expect(await fleet.broker.store.agents.findLiveByName('second')).toBeUndefined();
    },
  },
  {
    name: 'a broker certificate that does not name the address dialled (the token is not used)',
    async attempt(fleet) {
      const token = await fleet.token();
      const outcome = await enrollOutcome({
        brokerAddress: fleet.address.replace('localhost', '127.0.0.2'),
        token,
        caPin: fleet.pin,
        name: 'mismatch',
        dataDir: fleet.agentDir('mismatch'),
      });
      expect(await tokenUses(fleet, token)).toBe(0);
      return outcome;
    },
    refused: /does not name "127\.0\.0\.2"/,
    afterwards: (fleet) => expect(existsSync(fleet.agentDir('mismatch'))).toBe(false),
  },
];

describe('credentials the broker refuses', () => {
  let fleet: TestFleet;
  beforeAll(async () => {
    // On every loopback address, so one case can dial 127.0.0.2, which the certificate does not name.
    fleet = await startTestFleet({ grpcListen: '0.0.0.0:0' });
    await fleet.addAgent('real');
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it.each(REFUSALS)('refuses $name', async ({ attempt, refused, afterwards }) => {
    expect(await attempt(fleet)).toMatch(refused);
    await afterwards?.(fleet);
  });
});

/** GET a URL on a connection of its own; rejects when no answer starts within `timeoutMs`. */
function probeStatus(url: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error(`${url} did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

describe('Enroll before authentication', () => {
  let fleet: TestFleet | undefined;
  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
  });

  it('refuses oversized requests sent in parallel while agents stay connected and /healthz keeps answering', async () => {
    fleet = await startTestFleet();
    const steady = [await fleet.addAgent('steady-1'), await fleet.addAgent('steady-2')];
    const dropped: string[] = [];
    for (const agent of steady) agent.connection.on('disconnected', (reason: string) => dropped.push(reason));
    const ca = fleet.broker.authority.ca.certificatePem;
    const token = await fleet.token({ uses: null });
    const csrPem = `-----BEGIN CERTIFICATE REQUEST-----\n${'A'.repeat(15 * 1024 * 1024)}\n-----END CERTIFICATE REQUEST-----\n`;
    let settled = false;
    const flood = Promise.all(Array.from({ length: 8 }, (_, i) => rawEnroll(fleet?.address ?? '', ca, { token, csrPem, name: `flood-${i}` }))).finally(() => {
      settled = true;
    });
    // The issue's bound: /healthz answers within 1 s all through the flood (it stalled for 19 s when
    // requests were parsed on the event loop). On a machine loaded past its cores one probe may miss
    // the second by itself, so a miss is retried at once; three misses in a row fail the test.
    const health = `${new URL(fleet.broker.mcpUrl).origin}/healthz`;
    const answers: number[] = [];
    const answerWithinOneSecond = async (misses = 0): Promise<number> => {
      try {
        return await probeStatus(health, 1000);
      } catch (error) {
        if (misses >= 2) throw error;
        return answerWithinOneSecond(misses + 1);
      }
    };
    do answers.push(await answerWithinOneSecond());
    while (!settled);
    const outcomes = await flood;
    for (const outcome of outcomes) {
      expect(outcome.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(outcome.details).toMatch(/^the certificate signing request is \d+ characters long; at most 16384 are accepted$/);
    }
    expect(answers.every((status) => status === 200)).toBe(true);
    expect(dropped).toEqual([]);
    await waitFor(() => steady.every((agent) => fleet?.broker.registry.find(agent.options.name ?? '')?.state === 'online'), { what: 'both agents online' });
    expect((await fleet.broker.store.agents.list()).map((a) => a.name)).toEqual(['steady-1', 'steady-2']);
    // Moving 120 MiB through TLS in one process takes tens of seconds on a busy two-core machine.
  }, 180_000);

  it('limits attempts per source address and per join token, saying when to retry, and logs refusals at a bounded rate', async () => {
    const { log, lines } = captureLogger();
    fleet = await startTestFleet({ log, enrollLimits: { perSource: { burst: 3, perMinute: 1 }, perToken: { burst: 100, perMinute: 100 } } });
    const ca = fleet.broker.authority.ca.certificatePem;
    const outcomes: RawEnrollOutcome[] = [];
    for (let i = 0; i < 25; i += 1) outcomes.push(await rawEnroll(fleet.address, ca, { token: await fleet.token(), csrPem: 'not a request', name: `n-${i}` }));
    expect(outcomes.slice(0, 3).map((o) => o.code)).toEqual([grpc.status.INVALID_ARGUMENT, grpc.status.INVALID_ARGUMENT, grpc.status.INVALID_ARGUMENT]);
    for (const outcome of outcomes.slice(3)) {
      expect(outcome.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(outcome.details).toMatch(/^too many enrollment attempts from \S+; retry in \d+ s$/);
    }
    const logged = lines.filter((line) => line.message === 'enrollment refused');
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.length).toBeLessThan(25);

    // One join token, from anywhere: its own budget.
    await fleet.restartBroker({ enrollLimits: { perSource: { burst: 100, perMinute: 100 }, perToken: { burst: 2, perMinute: 1 } } });
    const reusable = await fleet.token({ uses: null });
    const tokenId = reusable.split('.')[1];
    const byToken: RawEnrollOutcome[] = [];
    for (let i = 0; i < 3; i += 1) byToken.push(await rawEnroll(fleet.address, ca, { token: reusable, csrPem: 'not a request', name: `t-${i}` }));
    expect(byToken.map((o) => o.code)).toEqual([grpc.status.INVALID_ARGUMENT, grpc.status.INVALID_ARGUMENT, grpc.status.RESOURCE_EXHAUSTED]);
    expect(byToken[2]?.details).toMatch(new RegExp(`^too many enrollment attempts with join token ${tokenId}; retry in \\d+ s$`));
    // Another token is not held back by that one, and a real agent still enrolls.
    await fleet.addAgent('after-the-limit');
    expect(fleet.broker.registry.find('after-the-limit')?.state).toBe('online');
  });
});

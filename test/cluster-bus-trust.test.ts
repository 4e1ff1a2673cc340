import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect, type NatsConnection, nkeys } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import { createIdentity } from '../broker/auth/identities.ts';
import { Broker } from '../broker/broker.ts';
import { Bus } from '../broker/cluster/bus.ts';
import { signEnvelope } from '../broker/cluster/bus-envelope.ts';
import { type BusKeys, createBusKeys } from '../broker/cluster/bus-keys.ts';
import { beatMessage, type CallReply, type CallRequestMessage, callReply, SUBJECTS } from '../broker/cluster/bus-messages.ts';
import { BusTrust, type DropReason } from '../broker/cluster/bus-trust.ts';
import { DockerIndexer } from '../broker/domains/docker/docker-indexer.ts';
import { silentLogger } from '../shared/log/logger.ts';
import { type CertificateAuthority, createCertificateAuthority, createKeyPair, issueServerCertificate } from '../shared/pki/certificates.ts';
import { captureLogger } from './harness/capture-logger.ts';
import { CliProcess } from './harness/cli-process.ts';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { NatsServer } from './harness/nats-server.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestCluster, type TestCluster } from './harness/test-cluster.ts';
import { brokerOptions } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const encoder = new TextEncoder();
const json = (message: unknown) => encoder.encode(JSON.stringify(message));

/** How many messages a broker dropped for that reason so far. */
function dropped(broker: Broker, reason: DropReason): number {
  return broker.cluster?.droppedMessages().get(reason) ?? 0;
}

/** Resolves once the broker has dropped `count` more messages for that reason than it had when asked. */
function dropsOf(broker: Broker, reason: DropReason, count = 1): () => Promise<unknown> {
  const before = dropped(broker, reason);
  return () => waitFor(() => dropped(broker, reason) >= before + count, { what: `${count} more ${reason} drops on broker ${broker.cluster?.brokerId}` });
}

describe('a bus only brokers can speak on', () => {
  let cluster: TestCluster;
  let client: Client;
  let target: Agent;
  let manager: Agent;
  let ca: CertificateAuthority;
  /** A client of the bus that holds its token, as an attacker who stole it would. */
  let attacker: NatsConnection;
  /** A broker registered on the store with the fleet CA (one whose host was taken over), speaking with its own genuine keys. */
  let rogue: { keys: BusKeys; bus: Bus };
  const victim = `fm-victim-${randomBytes(3).toString('hex')}`;
  const docker = testDocker();

  beforeAll(async () => {
    cluster = await startTestCluster();
    target = await cluster.addAgent('target', 'c');
    manager = await cluster.addAgent('mgr', 'c', {
      roles: ['swarm-manager'],
      collectors: 'default',
      agent: { dockerAddress: inject('dockerHost') },
    });
    client = await mcpClient(cluster.a, await identityToken(cluster.a, 3, undefined, 'admin'));
    await runContainer(docker, { name: victim, command: ['sleep', '600'] });
    attacker = await connect({ servers: cluster.nats.url, token: cluster.busToken });
    ca = { certificatePem: readFileSync(cluster.caFiles.cert, 'utf8'), privateKeyPem: readFileSync(cluster.caFiles.key, 'utf8') };
    const keys = await createBusKeys(ca, 'rogue');
    await cluster.a.store.brokers.register(keys.registration);
    const trust = new BusTrust(keys, cluster.a.store.brokers, () => [ca.certificatePem], silentLogger);
    const bus = await Bus.open({ url: cluster.nats.url, token: cluster.busToken, brokerId: 'rogue' }, trust, silentLogger);
    // It hears c's beats, so it may seal calls to c.
    bus.subscribe(SUBJECTS.beat, beatMessage, () => {});
    rogue = { keys, bus };
  }, 120_000);

  afterAll(async () => {
    await rogue?.bus.close();
    await attacker?.close();
    await client?.close();
    await removeContainers(docker, [victim]);
    await cluster?.stop();
  });

  const heldBy = (broker: Broker, name: string) => broker.registry.find(name)?.session?.heldBy ?? 'here';
  const agentId = (name: string) => cluster.a.registry.find(name)?.id ?? '';
  const running = async () => (await docker.getContainer(victim).inspect()).State.Running;

  it('refuses a client that does not hold the bus token', async () => {
    await expect(connect({ servers: cluster.nats.url, reconnect: false })).rejects.toThrow(/Authorization/i);
  });

  it("shows a client on the bus neither a secret's data nor a call's parameters in clear", async () => {
    const seen: { subject: string; data: Buffer }[] = [];
    const sniffer = attacker.subscribe('>', { callback: (_error, message) => void seen.push({ subject: message.subject, data: Buffer.from(message.data) }) });
    const data = `hunter2-${randomBytes(6).toString('hex')}`;
    const secretName = `fm-bus-${randomBytes(3).toString('hex')}`;
    try {
      expect(heldBy(cluster.a, 'mgr')).toBe('c');
      const secret = await call(client, 'create_secret', { name: secretName, data });
      expect(secret.structuredContent).toMatchObject({ name: secretName, size_bytes: data.length });
      await call(client, 'agent_info', { host: 'target' });
      await attacker.flush();
      const calls = seen.filter((message) => message.subject.startsWith('fleetmesh.calls.'));
      expect(calls.length).toBeGreaterThanOrEqual(2);
      // A call on the bus is no JSON anyone can read: its action, identity and parameters are sealed.
      for (const message of calls) expect(() => JSON.parse(message.data.toString())).toThrow();
      for (const message of calls) expect(message.data.includes(Buffer.from('"params"'))).toBe(false);
      const everything = Buffer.concat(seen.map((message) => message.data));
      for (const text of [data, Buffer.from(data).toString('base64')]) expect(everything.includes(Buffer.from(text))).toBe(false);
    } finally {
      sniffer.unsubscribe();
      await docker
        .getSecret(secretName)
        .remove()
        .catch(() => {});
    }
  });

  it("drops a call sent straight to an agent's subject, in clear or signed by a stranger: nothing is stopped, nothing answers, nothing is audited", async () => {
    const answers: unknown[] = [];
    const inbox = `_INBOX.${randomUUID().replaceAll('-', '')}`;
    attacker.subscribe(inbox, { callback: (_error, message) => void answers.push(message.data) });
    const request: CallRequestMessage = {
      requestId: randomUUID(),
      from: 'a',
      agents: [agentId('mgr')],
      action: 'docker.stop',
      params: { name: victim },
      timeoutMs: 5000,
      caller: 'admin',
      authority: { identityId: 'whatever', actionId: 'docker.stop', confirmed: true },
      streamChunks: false,
    };
    const subject = SUBJECTS.agentCalls(agentId('mgr'));
    const unsigned = dropsOf(cluster.c, 'unsigned');
    const forged = dropsOf(cluster.c, 'bad_signature');
    const stranger = dropsOf(cluster.c, 'unknown_broker');
    attacker.publish(subject, json(request), { reply: inbox });
    const someoneElse = generateKeyPairSync('ed25519').privateKey;
    attacker.publish(subject, signEnvelope(subject, 'a', 1, json(request), someoneElse), { reply: inbox });
    attacker.publish(subject, signEnvelope(subject, 'evil', 1, json({ ...request, from: 'evil' }), someoneElse), { reply: inbox });
    await Promise.all([unsigned(), forged(), stranger()]);
    await attacker.flush();
    expect(answers).toEqual([]);
    expect(await running()).toBe(true);
    const audit = await cluster.a.store.audit.recent({ limit: 200 });
    expect(audit.filter((row) => row.action === 'docker.stop')).toEqual([]);
  });

  it('authorises a relayed call again where it runs: a registered broker cannot lend an identity power it lacks, nor skip the audit', async () => {
    await waitFor(() => rogue.bus.knows('c'), { what: 'the rogue broker to hear c' });
    const viewer = await createIdentity(cluster.a.store, { name: 'viewer', level: 0 });
    const admin = await cluster.a.store.identities.findLiveByName('admin');
    const send = (authority: CallRequestMessage['authority'], caller: string, auditId?: string) =>
      new Promise<CallReply>((resolve) => {
        const inbox = rogue.bus.inbox();
        const subscription = rogue.bus.replies(inbox, callReply, (reply) => {
          if (reply === 'no_responders') return;
          subscription.unsubscribe();
          resolve(reply.message);
        });
        const message: CallRequestMessage = {
          requestId: randomUUID(),
          from: 'rogue',
          agents: [agentId('mgr')],
          action: 'docker.stop',
          params: { name: victim },
          timeoutMs: 10_000,
          caller,
          authority,
          streamChunks: false,
          ...(auditId ? { auditId } : {}),
        };
        rogue.bus.publishSealed(SUBJECTS.brokerCalls('c'), message, ['c'], { reply: inbox, sign: true });
      });
    const asViewer = await send({ identityId: viewer.id, actionId: 'docker.stop', confirmed: true }, 'viewer');
    expect(asViewer).toMatchObject({
      t: 'outcome',
      outcome: { ok: false, error: { code: 'forbidden', message: expect.stringMatching(/above what identity viewer may do/) } },
    });
    const unconfirmed = await send({ identityId: admin?.id ?? '', actionId: 'docker.stop', confirmed: false }, 'admin');
    expect(unconfirmed).toMatchObject({ outcome: { ok: false, error: { code: 'confirm_required' } } });
    const unaudited = await send({ identityId: admin?.id ?? '', actionId: 'docker.stop', confirmed: true }, 'admin', randomUUID());
    expect(unaudited).toMatchObject({ outcome: { ok: false, error: { code: 'forbidden', message: expect.stringMatching(/without its pending audit row/) } } });
    expect(await running()).toBe(true);
    const refusals = (await cluster.a.store.audit.recent({ limit: 200, refused: true })).filter((row) => row.reason?.includes('relayed by broker rogue'));
    expect(refusals.map((row) => [row.identity, row.action, row.errorCode])).toEqual(
      expect.arrayContaining([
        ['viewer', 'docker.stop', 'forbidden'],
        ['admin', 'docker.stop', 'confirm_required'],
        ['admin', 'docker.stop', 'forbidden'],
      ]),
    );
  });

  it('drops a replayed call: a change captured on the bus cannot be made again', async () => {
    const captured: { subject: string; data: Uint8Array }[] = [];
    const subject = SUBJECTS.agentCalls(agentId('target'));
    const capture = attacker.subscribe(subject, { callback: (_error, message) => void captured.push({ subject: message.subject, data: message.data }) });
    await call(client, 'set_agent_labels', { host: 'target', labels: { replay: 'one' } });
    await call(client, 'set_agent_labels', { host: 'target', labels: { replay: 'two' } });
    await attacker.flush();
    capture.unsubscribe();
    expect(captured.length).toBeGreaterThanOrEqual(2);
    const replayed = dropsOf(cluster.c, 'replayed');
    attacker.publish(subject, captured[0]?.data ?? new Uint8Array(), { reply: `_INBOX.${randomUUID().replaceAll('-', '')}` });
    await replayed();
    expect((await call(client, 'agent_info', { host: 'target' })).structuredContent).toMatchObject({ labels: { replay: 'two' } });
  });

  it('believes reports only from the broker that holds the agent, and presence (alone or in a batch) only from the broker it names', async () => {
    const id = agentId('target');
    const report = { kind: 'container_inventory', payload: { taken_unix_ms: Date.now(), containers: [], volumes: [] }, observedUnixMs: Date.now() };
    const notHolder = dropsOf(cluster.a, 'wrong_sender');
    rogue.bus.publish(SUBJECTS.report, { broker: 'rogue', agent: id, ...report });
    await notHolder();
    const spoken = dropsOf(cluster.a, 'wrong_sender');
    rogue.bus.publish(SUBJECTS.presence, {
      broker: 'c',
      agent: id,
      state: 'online',
      connectedAt: Date.now() + 60_000,
      hello: null,
      labels: {},
      lastSeenAt: null,
    });
    await spoken();
    // In a batch too: the batch is the rogue's own, the presence in it speaks for broker c.
    const inBatch = dropsOf(cluster.a, 'wrong_sender');
    rogue.bus.publish(SUBJECTS.presences, {
      broker: 'rogue',
      presences: [{ broker: 'c', agent: id, state: 'online', connectedAt: Date.now() + 60_000, hello: null, labels: {}, lastSeenAt: null }],
    });
    await inBatch();
    const unsigned = dropsOf(cluster.a, 'unsigned');
    attacker.publish(
      SUBJECTS.presence,
      json({ broker: 'evil', agent: id, state: 'online', connectedAt: Date.now() + 60_000, hello: null, labels: {}, lastSeenAt: null }),
    );
    await unsigned();
    expect(heldBy(cluster.a, 'target')).toBe('c');
    expect((await call(client, 'agent_info', { host: 'target' })).structuredContent).toMatchObject({ host: 'target', availability: 'available' });
  });

  it("applies a broker's report of an agent it just met after that agent's presence, which waits on the store", async () => {
    // An agent enrolled after broker a started, so a reads it from the store when it first hears of it.
    const id = `late-${randomUUID()}`;
    await cluster.a.store.agents.insert({ id, name: 'late-joiner', tokenLabels: {}, publicKeySha256: 'x'.repeat(64), enrolledAt: Date.now(), tokenId: 'none' });
    const wrongSender = dropped(cluster.a, 'wrong_sender');
    const now = Date.now();
    rogue.bus.publish(SUBJECTS.presences, {
      broker: 'rogue',
      presences: [{ broker: 'rogue', agent: id, state: 'online', connectedAt: now, hello: null, labels: {}, lastSeenAt: now }],
    });
    rogue.bus.publish(SUBJECTS.reports, {
      broker: 'rogue',
      reports: [{ agent: id, kind: 'container_inventory', payload: { taken_unix_ms: now, containers: [], volumes: [] }, observedUnixMs: now }],
    });
    await waitFor(() => cluster.a.index.indexer(DockerIndexer).inventory(id), { what: "the late joiner's inventory in a's index" });
    expect(heldBy(cluster.a, 'late-joiner')).toBe('rogue');
    expect(dropped(cluster.a, 'wrong_sender')).toBe(wrongSender);
    rogue.bus.publish(SUBJECTS.presences, {
      broker: 'rogue',
      presences: [{ broker: 'rogue', agent: id, state: 'offline', connectedAt: 0, hello: null, labels: {}, lastSeenAt: now }],
    });
    await waitFor(() => cluster.a.registry.find('late-joiner')?.session === undefined, { what: 'the late joiner offline on a' });
  });

  it('acts on a revocation or a departure only once the store says so', async () => {
    const id = agentId('target');
    const revoked = dropsOf(cluster.a, 'unconfirmed');
    const revokedOnC = dropsOf(cluster.c, 'unconfirmed');
    rogue.bus.publish(SUBJECTS.revoked, { broker: 'rogue', agent: id });
    await Promise.all([revoked(), revokedOnC()]);
    const gone = dropsOf(cluster.a, 'wrong_sender');
    rogue.bus.publish(SUBJECTS.gone, { broker: 'c' });
    await gone();
    expect(target.connection.connected).toBe(true);
    expect(cluster.a.registry.find('target')?.state).toBe('online');
    expect(cluster.a.registry.find('mgr')?.state).toBe('online');
  });

  it('drops every message of a broker the operator removed, and refuses its id a new start', async () => {
    // Each command with a data dir of its own, as an operator's machine would give it.
    const removeDir = makeTempDir();
    const listDir = makeTempDir();
    let listed: string;
    try {
      const removal = new CliProcess(['brokers', 'remove', 'rogue', '--data-dir', removeDir.path, '--store', cluster.storeUrl]);
      expect(await removal.exited).toBe(0);
      expect(removal.stdout).toMatch(/removed broker rogue/);
      const list = new CliProcess(['brokers', '--output', 'json', '--data-dir', listDir.path, '--store', cluster.storeUrl]);
      expect(await list.exited).toBe(0);
      listed = list.stdout;
    } finally {
      removeDir.remove();
      listDir.remove();
    }
    expect((JSON.parse(listed) as { brokers: { broker_id: string; state: string }[] }).brokers).toContainEqual(
      expect.objectContaining({ broker_id: 'rogue', state: 'removed' }),
    );
    await waitFor(
      async () => {
        const before = dropped(cluster.a, 'removed_broker');
        rogue.bus.publish(SUBJECTS.beat, { broker: 'rogue' });
        await new Promise((resolve) => setTimeout(resolve, 200));
        return dropped(cluster.a, 'removed_broker') > before;
      },
      { what: "a to drop the removed broker's beat" },
    );
    await expect(cluster.a.store.brokers.register((await createBusKeys(ca, 'rogue')).registration)).resolves.toBe(false);
    const metrics = await (await fetch(new URL('/metrics', cluster.a.mcpUrl))).text();
    expect(metrics).toMatch(/fleetmesh_bus_messages_dropped_total\{broker="a",reason="removed_broker"\} [1-9]/);
    expect(manager.connection.connected).toBe(true);
  });
});

describe('a broker starting on a bus', () => {
  const temp = makeTempDir('fleetmesh-bus-auth-');
  const servers: NatsServer[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop();
    temp.remove();
  });
  const nats = async (args: string[] = []) => {
    const server = await NatsServer.start(args);
    servers.push(server);
    return server;
  };
  let count = 0;
  const start = (cluster: Record<string, unknown> & { url: string }, log = silentLogger) =>
    Broker.start(
      brokerOptions(join(temp.path, `broker-${++count}`), { cluster: { token: undefined, brokerId: `solo-${count}`, beatIntervalMs: 1000, ...cluster } }),
      log,
    );
  /** A broker on a bus that wants `token`, and the lines it logs. */
  const startLogged = async (url: string, token: string) => {
    const { log, lines } = captureLogger();
    return { broker: await start({ url, token }, log), lines };
  };

  it('refuses a bus without credentials, and one that lets strangers in even when the broker has a token', async () => {
    const open = await nats();
    await expect(start({ url: open.url })).rejects.toThrow(/the bus has no credentials/);
    await expect(start({ url: open.url, token: 'anything' })).rejects.toThrow(/lets in clients without credentials/);
  });

  it('starts on such a bus when told --bus-insecure, and says what that gives up on /readyz', async () => {
    const open = await nats();
    const broker = await start({ url: open.url, insecure: true });
    try {
      const ready = await fetch(new URL('/readyz', broker.mcpUrl));
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { warnings: string[] }).warnings).toEqual([expect.stringMatching(/--bus-insecure.*anyone who reaches NATS/)]);
    } finally {
      await broker.stop();
    }
  });

  it('says why it lost the bus: a server that stops answering is a stale connection after two unanswered pings', async () => {
    const guarded = await nats(['--auth', 'ping-token']);
    const { broker, lines } = await startLogged(guarded.url, 'ping-token');
    try {
      guarded.freeze(true);
      const lost = await waitFor(() => lines.find((line) => line.message === 'disconnected from the bus; reconnecting'), {
        timeoutMs: 30_000,
        what: 'the broker to count the bus lost',
      });
      expect(lost.reason).toMatch(/no answer to 2 pings in a row/);
      guarded.freeze(false);
      await waitFor(() => lines.find((line) => line.message === 'reconnected to the bus'), { timeoutMs: 30_000, what: 'the broker back on the bus' });
    } finally {
      guarded.freeze(false);
      await broker.stop();
    }
  }, 60_000);

  it('keeps trying a bus that refuses it for a while, and is back on it once the server takes its token again', async () => {
    const guarded = await nats(['--auth', 'kept-token']);
    const { broker, lines } = await startLogged(guarded.url, 'kept-token');
    try {
      // The server comes back expecting another token (changed there before the brokers' files): every
      // reconnect is refused for the same reason, as a held loop's are with "Authentication Timeout".
      await guarded.stop();
      await guarded.start(['--auth', 'another-token']);
      const refusals = () => lines.filter((line) => line.message === 'the bus server reported an error' && /authorization/i.test(String(line.error)));
      await waitFor(() => refusals().length >= 1, { timeoutMs: 20_000, what: 'the server refusing the broker' });
      // Three seconds of refusals, five or so reconnects: logged once, not each time.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(refusals()).toHaveLength(1);
      expect(broker.cluster?.problem()).toBe('disconnected from NATS; reconnecting');

      await guarded.stop();
      await guarded.start(['--auth', 'kept-token']);
      await waitFor(() => lines.find((line) => line.message === 'reconnected to the bus'), { timeoutMs: 20_000, what: 'the broker back on the bus' });
      expect(broker.cluster?.problem()).toBeUndefined();
      expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    } finally {
      await broker.stop();
    }
  }, 60_000);

  it('refuses a wrong token with one clear error, and takes the right one', async () => {
    const guarded = await nats(['--auth', 's3cret-token']);
    await expect(start({ url: guarded.url, token: 'wrong' })).rejects.toThrow(/cannot reach the bus at nats:\/\/127\.0\.0\.1:\d+: .*Authorization/i);
    const broker = await start({ url: guarded.url, token: 's3cret-token' });
    expect(broker.cluster?.problem()).toBeUndefined();
    await broker.stop();
  });

  it('speaks to NATS over TLS, checked against the CA it is given, as an nkey user', async () => {
    const keys = await createKeyPair();
    const natsCa = await createCertificateAuthority({ commonName: 'bus CA', lifetimeMs: 86_400_000 });
    const certificate = issueServerCertificate(natsCa, { publicKeyPem: keys.publicKeyPem, names: ['localhost', '127.0.0.1'], lifetimeMs: 86_400_000 });
    const user = nkeys.createUser();
    const config = join(temp.path, 'nats.conf');
    writeFileSync(join(temp.path, 'nats.crt'), certificate.certificatePem);
    writeFileSync(join(temp.path, 'nats.key'), keys.privateKeyPem);
    writeFileSync(
      config,
      [
        `tls { cert_file: "${join(temp.path, 'nats.crt')}", key_file: "${join(temp.path, 'nats.key')}" }`,
        `authorization { users: [ { nkey: "${user.getPublicKey()}" } ] }`,
      ].join('\n'),
    );
    const secured = await nats(['-c', config]);
    const seed = new TextDecoder().decode(user.getSeed());
    await expect(start({ url: `tls://127.0.0.1:${secured.port}`, nkeySeed: seed })).rejects.toThrow(/cannot reach the bus/);
    const broker = await start({ url: `tls://127.0.0.1:${secured.port}`, nkeySeed: seed, tls: { ca: natsCa.certificatePem } });
    expect(broker.cluster?.problem()).toBeUndefined();
    await broker.stop();
  });
});

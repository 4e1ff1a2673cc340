import { type AddressInfo, createServer, type Server } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { CODE_KEY, HINT_KEY } from '../../shared/grpc/status-codes.ts';
import {
  createCertificateAuthority,
  createKeyPair,
  createServingKeyPair,
  issueAgentCertificate,
  issueServerCertificate,
} from '../../shared/pki/certificates.ts';
import { waitFor } from '../../test/harness/wait.ts';
import { GrpcServer, type ServerCall } from './grpc-server.ts';

/** Messages are raw bytes here: the server's framing and statuses are what is tested, not a schema. */
const bytes = { decode: (body: Buffer) => Buffer.from(body), encode: (message: Buffer) => message };
const passThrough = (value: Buffer) => value;
const MAX_BYTES = 64 * 1024;

/** A method of the test service, its messages passed through as bytes. */
const method = (name: string, streams: boolean) => ({
  path: `/test.T/${name}`,
  requestStream: streams,
  responseStream: streams,
  requestSerialize: passThrough,
  requestDeserialize: passThrough,
  responseSerialize: passThrough,
  responseDeserialize: passThrough,
});
const Client = grpc.makeGenericClientConstructor(
  { echo: method('Echo', false), refuse: method('Refuse', false), talk: method('Talk', true), missing: method('Missing', false) },
  'T',
);
type TestClient = grpc.Client & Record<string, (...args: unknown[]) => unknown>;

function unary(client: TestClient, method: string, request: Buffer): Promise<{ response?: Buffer; error?: grpc.ServiceError }> {
  return new Promise((resolve) => {
    client[method]?.(request, (error: grpc.ServiceError | null, response?: Buffer) => resolve(error ? { error } : { response }));
  });
}

describe('the broker gRPC server, to a grpc-js client', () => {
  let server: GrpcServer;
  let listener: Server;
  let port: number;
  let caPem: string;
  let agent: { key: string; cert: string };
  let stranger: { key: string; cert: string; caPem: string };
  /** What the Talk handler saw of each call. */
  const talks: { call: ServerCall<Buffer, Buffer>; received: string[]; events: string[]; certificate: boolean }[] = [];
  let listenAfterMs = 0;

  beforeAll(async () => {
    const ca = await createCertificateAuthority({ commonName: 'test CA', lifetimeMs: 3_600_000 });
    const other = await createCertificateAuthority({ commonName: 'another CA', lifetimeMs: 3_600_000 });
    const servingKeys = await createServingKeyPair();
    const serving = issueServerCertificate(ca, { publicKeyPem: servingKeys.publicKeyPem, names: ['localhost'], lifetimeMs: 3_600_000 });
    const agentKeys = await createKeyPair();
    caPem = ca.certificatePem;
    agent = {
      key: agentKeys.privateKeyPem,
      cert: issueAgentCertificate(ca, { publicKeyPem: agentKeys.publicKeyPem, agentId: 'a1', name: 'a1', lifetimeMs: 3_600_000 }).certificatePem,
    };
    stranger = {
      key: agentKeys.privateKeyPem,
      cert: issueAgentCertificate(other, { publicKeyPem: agentKeys.publicKeyPem, agentId: 'a2', name: 'a2', lifetimeMs: 3_600_000 }).certificatePem,
      caPem: other.certificatePem,
    };
    server = new GrpcServer({
      tls: { key: Buffer.from(servingKeys.privateKeyPem), cert: Buffer.from(serving.certificatePem), ca: Buffer.from(ca.certificatePem) },
      maxMessageBytes: MAX_BYTES,
      keepaliveIntervalMs: 20_000,
      keepaliveTimeoutMs: 20_000,
    });
    server.unary('/test.T/Echo', bytes, async (request) => Buffer.concat([Buffer.from('echo:'), request]));
    server.unary('/test.T/Refuse', bytes, async () => {
      throw new FleetError('forbidden', 'not you — 100% sure', { hint: 'ask the operator (café)' });
    });
    server.stream('/test.T/Talk', bytes, (call) => {
      const talk = { call, received: [] as string[], events: [] as string[], certificate: call.getAuthContext().sslPeerCertificate !== undefined };
      talks.push(talk);
      for (const event of ['end', 'cancelled', 'close'] as const) call.on(event, () => talk.events.push(event));
      call.on('error', () => talk.events.push('error'));
      // As the broker does while it authenticates: frames wait in the stream until a 'data' listener is on.
      setTimeout(() => {
        call.on('data', (message) => {
          talk.received.push(message.toString());
          if (message.toString() === 'bye') call.end();
          else call.write(Buffer.from(`heard ${message.toString()}`));
        });
      }, listenAfterMs);
    });
    listener = createServer((socket) => server.inject(socket));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as AddressInfo).port;
  });

  const clients: grpc.Client[] = [];
  afterAll(async () => {
    for (const client of clients) client.close();
    await server.close(100);
    await new Promise((resolve) => listener.close(resolve));
  });

  function client(credentials = grpc.credentials.createSsl(Buffer.from(caPem), Buffer.from(agent.key), Buffer.from(agent.cert))): TestClient {
    const made = new Client(`localhost:${port}`, credentials) as unknown as TestClient;
    clients.push(made);
    return made;
  }

  it('answers a unary call, and ends a refused one with its status, message and metadata as sent', async () => {
    const c = client();
    expect((await unary(c, 'echo', Buffer.from('hi'))).response?.toString()).toBe('echo:hi');
    const { error } = await unary(c, 'refuse', Buffer.from(''));
    expect(error?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(error?.details).toBe('not you — 100% sure');
    expect(error?.metadata.get(CODE_KEY)).toEqual(['forbidden']);
    expect(error?.metadata.get(HINT_KEY).map((value) => value.toString())).toEqual(['ask the operator (café)']);
  });

  it('says UNIMPLEMENTED for a method it does not serve, and RESOURCE_EXHAUSTED for a message over the limit', async () => {
    const c = client();
    expect((await unary(c, 'missing', Buffer.from('x'))).error?.code).toBe(grpc.status.UNIMPLEMENTED);
    const { error } = await unary(c, 'echo', Buffer.alloc(MAX_BYTES + 1));
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(error?.details).toMatch(/over the 65536 allowed/);
  });

  it('streams both ways, keeping the frames sent before the handler reads, and ends with OK', async () => {
    listenAfterMs = 200;
    const c = client();
    const stream = (c.talk as () => grpc.ClientDuplexStream<Buffer, Buffer>)();
    const heard: string[] = [];
    stream.on('data', (message: Buffer) => heard.push(message.toString()));
    const status = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    stream.on('error', () => {});
    for (const word of ['one', 'two', 'three']) stream.write(Buffer.from(word));
    stream.write(Buffer.from('bye'));
    expect((await status).code).toBe(grpc.status.OK);
    expect(heard).toEqual(['heard one', 'heard two', 'heard three']);
    const talk = talks.at(-1);
    expect(talk?.received).toEqual(['one', 'two', 'three', 'bye']);
    expect(talk?.certificate).toBe(true);
    listenAfterMs = 0;
  });

  it('tells the handler when the client cancels, and shows no certificate another CA issued', async () => {
    const c = client(grpc.credentials.createSsl(Buffer.from(caPem), Buffer.from(stranger.key), Buffer.from(stranger.cert)));
    const stream = (c.talk as () => grpc.ClientDuplexStream<Buffer, Buffer>)();
    stream.on('error', () => {});
    const before = talks.length;
    stream.write(Buffer.from('hello'));
    await waitFor(() => talks.length > before && (talks.at(-1)?.received.length ?? 0) > 0, { what: 'the call reached the handler' });
    const talk = talks.at(-1);
    expect(talk?.certificate).toBe(false);
    stream.cancel();
    await waitFor(() => talk?.events.includes('close') === true, { what: 'the call closed' });
    expect(talk?.events).toContain('cancelled');
    expect(talk?.call.cancelled).toBe(true);
  });
});

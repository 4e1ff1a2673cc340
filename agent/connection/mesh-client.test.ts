import http2 from 'node:http2';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentFrameSchema,
  type BrokerFrame,
  BrokerFrameSchema,
  EnrollRequestSchema,
  HelloSchema,
  WelcomeSchema,
} from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { fromGrpcError, GrpcCode, type GrpcStatus } from '../../shared/grpc/status-codes.ts';
import { createCertificateAuthority, createServingKeyPair, issueServerCertificate } from '../../shared/pki/certificates.ts';
import { MAX_MESSAGE_BYTES } from '../../shared/version.ts';
import { MeshClient } from './mesh-client.ts';

/** One gRPC message as it goes on the wire: a flag byte, a 4-byte length, the bytes. */
function framed(bytes: Uint8Array, length = bytes.byteLength): Buffer {
  const frame = Buffer.alloc(5 + bytes.byteLength);
  frame.writeUInt32BE(length, 1);
  frame.set(bytes, 5);
  return frame;
}

const welcome = (name: string) =>
  toBinary(BrokerFrameSchema, create(BrokerFrameSchema, { frame: { case: 'welcome', value: create(WelcomeSchema, { name }) } }));

/** What the test server does with each call, by the path's method name. */
type Handler = (stream: http2.ServerHttp2Stream, body: Buffer[]) => void;

// These cases are the ones a broker rarely shows (a message split over DATA frames, several in one, a status with
// metadata and no body, an oversized or undecodable message), served by hand from node:http2 over TLS with a
// certificate of our own CA.
describe('the agent gRPC client', () => {
  let server: http2.Http2SecureServer;
  let address: string;
  let caCertificatePem: string;
  let handler: Handler = () => {};
  const seen: { path: string; headers: http2.IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    const ca = await createCertificateAuthority({ commonName: 'test CA', lifetimeMs: 3_600_000 });
    const keys = await createServingKeyPair();
    const serving = issueServerCertificate(ca, { publicKeyPem: keys.publicKeyPem, names: ['localhost', '127.0.0.1'], lifetimeMs: 3_600_000 });
    caCertificatePem = ca.certificatePem;
    server = http2.createSecureServer({ key: keys.privateKeyPem, cert: serving.certificatePem });
    server.on('stream', (stream, headers) => {
      seen.push({ path: String(headers[':path']), headers });
      const body: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => body.push(chunk));
      handler(stream, body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function openStream(client: MeshClient): { frames: BrokerFrame[]; status: Promise<GrpcStatus> } {
    const stream = client.connect();
    const frames: BrokerFrame[] = [];
    stream.on('data', (frame) => frames.push(frame));
    const status = new Promise<GrpcStatus>((resolve) => stream.on('status', resolve));
    stream.write(create(AgentFrameSchema, { frame: { case: 'hello', value: create(HelloSchema, { agentVersion: 'test' }) } }));
    return { frames, status };
  }

  it('posts to the Connect path, reassembles messages however DATA frames cut or join them, and ends with the trailers status', async () => {
    handler = (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      const one = framed(welcome('first'));
      const two = framed(welcome('second'));
      const three = framed(welcome('third'));
      // Over HTTP/2's 16 KiB frames: it arrives in many pieces.
      const large = framed(welcome('x'.repeat(200_000)));
      // The first message in two pieces, then the second and third in one write.
      stream.write(one.subarray(0, 3));
      setTimeout(() => {
        stream.write(one.subarray(3));
        stream.write(Buffer.concat([two, three]));
        stream.end(large);
      }, 20);
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'bye%20now' }));
    };
    const client = new MeshClient(address, { caCertificatePem });
    const { frames, status } = openStream(client);
    expect(await status).toMatchObject({ code: GrpcCode.OK, details: 'bye now' });
    expect(frames.map((frame) => (frame.frame.case === 'welcome' ? frame.frame.value.name : frame.frame.case))).toEqual([
      'first',
      'second',
      'third',
      'x'.repeat(200_000),
    ]);
    client.close();
    const last = seen.at(-1);
    expect(last?.path).toBe('/fleetmesh.v1.Mesh/Connect');
    expect(last?.headers).toMatchObject({ ':method': 'POST', 'content-type': 'application/grpc+proto', te: 'trailers' });
  });

  it('reads a refusal sent as a status alone, with the broker code and hint in its metadata', async () => {
    handler = (stream) => {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': String(GrpcCode.PERMISSION_DENIED),
          'grpc-message': encodeURIComponent('the token is spent'),
          'fleetmesh-code': 'forbidden',
          'fleetmesh-hint-bin': Buffer.from('Make a new token — fleetmesh token create.').toString('base64'),
        },
        { endStream: true },
      );
    };
    const client = new MeshClient(address, { caCertificatePem });
    const refused = await client.enroll(create(EnrollRequestSchema, { token: 'spent' }), 5000).catch((status: GrpcStatus) => status);
    client.close();
    const error = fromGrpcError(refused as GrpcStatus);
    expect(error).toMatchObject({ code: 'forbidden', message: 'the token is spent', hint: 'Make a new token — fleetmesh token create.' });
    expect(error.details).toEqual({ grpcCode: GrpcCode.PERMISSION_DENIED });
    expect(seen.at(-1)?.path).toBe('/fleetmesh.v1.Mesh/Enroll');
  });

  it('ends a call whose message is over the size limit or does not decode, with a status that says which', async () => {
    for (const [frame, code, words] of [
      [framed(new Uint8Array(0), MAX_MESSAGE_BYTES + 1), GrpcCode.RESOURCE_EXHAUSTED, /over the \d+ allowed/],
      [framed(Uint8Array.from([0xff, 0xff, 0xff])), GrpcCode.INTERNAL, /does not decode/],
    ] as const) {
      handler = (stream) => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
        stream.write(frame);
      };
      const client = new MeshClient(address, { caCertificatePem });
      const status = await openStream(client).status;
      client.close();
      expect(status.code).toBe(code);
      expect(status.details).toMatch(words);
    }
  });

  it('says what went wrong when the answer is not gRPC, and when no broker listens', async () => {
    handler = (stream) => stream.respond({ ':status': 503 }, { endStream: true });
    const proxied = new MeshClient(address, { caCertificatePem });
    expect(await openStream(proxied).status).toMatchObject({ code: GrpcCode.UNAVAILABLE, details: 'the broker answered HTTP 503' });
    proxied.close();

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const nobody = new MeshClient(`127.0.0.1:${port}`, { caCertificatePem });
    const status = await openStream(nobody).status;
    nobody.close();
    expect(status.code).toBe(GrpcCode.UNAVAILABLE);
    expect(status.details).toMatch(/ECONNREFUSED/);
  });

  it('refuses a server whose certificate another CA signed, with the words Node gives', async () => {
    const stranger = await createCertificateAuthority({ commonName: 'another CA', lifetimeMs: 3_600_000 });
    const client = new MeshClient(address, { caCertificatePem: stranger.certificatePem });
    const status = await openStream(client).status;
    client.close();
    expect(status.code).toBe(GrpcCode.UNAVAILABLE);
    expect(status.details).toMatch(/unable to verify the first certificate|self[- ]signed|unable to get local issuer/i);
  });

  it('gives up on a broker that takes the connection and never finishes TLS, after the connect timeout', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const sockets: Socket[] = [];
    silent.on('connection', (socket) => sockets.push(socket));
    const client = new MeshClient(`127.0.0.1:${(silent.address() as AddressInfo).port}`, { caCertificatePem }, { connectTimeoutMs: 300 });
    const status = await openStream(client).status;
    client.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    expect(status).toMatchObject({ code: GrpcCode.UNAVAILABLE });
    expect(status.details).toMatch(/no connection to the broker at 127\.0\.0\.1:\d+ within 0\.3 s/);
  });

  it('leaves a broker that stops answering its keepalive pings, saying so', async () => {
    handler = (stream) => stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
    // A relay that passes bytes both ways until it is frozen: then the broker's side (its ping answers) is held back,
    // as a broker whose event loop is held answers none.
    let frozen = false;
    const sockets: Socket[] = [];
    const relay = createServer((agent) => {
      const broker = connect((server.address() as AddressInfo).port, '127.0.0.1');
      sockets.push(agent, broker);
      agent.pipe(broker);
      broker.on('data', (chunk: Buffer) => {
        if (!frozen) agent.write(chunk);
      });
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const client = new MeshClient(
      `127.0.0.1:${(relay.address() as AddressInfo).port}`,
      { caCertificatePem },
      { keepaliveIntervalMs: 200, keepaliveTimeoutMs: 300 },
    );
    const { status } = openStream(client);
    // Pings answered for a while: the call stays open.
    await new Promise((resolve) => setTimeout(resolve, 700));
    let ended = false;
    void status.then(() => {
      ended = true;
    });
    expect(ended).toBe(false);
    frozen = true;
    const result = await status;
    client.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => relay.close(resolve));
    expect(result).toMatchObject({ code: GrpcCode.UNAVAILABLE });
    expect(result.details).toMatch(/answered no keepalive ping within 0\.3 s/);
  });
});

import { create } from '@bufbuild/protobuf';
import { createMeshClient, type MeshClientCredentials, type MeshStream } from '../../agent/connection/mesh-client.ts';
import { AgentFrameSchema, type BrokerFrame, EnrollRequestSchema, HeartbeatSchema, HelloSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import type { GrpcStatus } from '../../shared/grpc/status-codes.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';

/** A Connect stream opened by hand, to present credentials no well-behaved agent would. */
export interface RawStream {
  frames: BrokerFrame[];
  status: Promise<GrpcStatus>;
  stream: MeshStream;
  close(): void;
}

export function openRawStream(address: string, credentials: MeshClientCredentials, options: { hello?: boolean; actions?: string[] } = {}): RawStream {
  const client = createMeshClient(address, credentials);
  const stream = client.connect();
  const frames: BrokerFrame[] = [];
  stream.on('data', (frame: BrokerFrame) => frames.push(frame));
  const status = new Promise<GrpcStatus>((resolve) => stream.on('status', resolve));
  let beat: NodeJS.Timeout | undefined;
  if (options.hello !== false) {
    stream.write(
      create(AgentFrameSchema, {
        frame: { case: 'hello', value: create(HelloSchema, { agentVersion: 'raw', protocolVersion: PROTOCOL_VERSION, actions: options.actions ?? [] }) },
      }),
    );
    // Beats like a live agent, under the test brokers' 200 ms interval: the broker ends a silent agent's stream.
    beat = setInterval(
      () => stream.write(create(AgentFrameSchema, { frame: { case: 'heartbeat', value: create(HeartbeatSchema, { sentUnixMs: BigInt(Date.now()) }) } })),
      100,
    );
    beat.unref();
    void status.then(() => clearInterval(beat));
  }
  return {
    frames,
    status,
    stream,
    close: () => {
      clearInterval(beat);
      stream.cancel();
      client.close();
    },
  };
}

/** How a raw Enroll ended: the gRPC status code and its details (OK when a certificate came back). */
export interface RawEnrollOutcome {
  code: number;
  details: string;
}

/** One Enroll sent by hand, with whatever fields a stranger chooses, over TLS verified with the broker CA. */
export function rawEnroll(
  address: string,
  caCertificatePem: string,
  request: { token?: string; csrPem?: string; name?: string; previousAgentId?: string; agentVersion?: string },
): Promise<RawEnrollOutcome> {
  const client = createMeshClient(address, { caCertificatePem });
  return client
    .enroll(create(EnrollRequestSchema, request), 60_000)
    .then(
      () => ({ code: 0, details: 'enrolled' }),
      (status: GrpcStatus) => ({ code: status.code, details: status.details }),
    )
    .finally(() => client.close());
}

import { create } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
import { createMeshClient, type MeshClientCredentials } from '../../agent/connection/mesh-client.ts';
import {
  type AgentFrame,
  AgentFrameSchema,
  type BrokerFrame,
  EnrollRequestSchema,
  HeartbeatSchema,
  HelloSchema,
} from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';

/** A Connect stream opened by hand, to present credentials no well-behaved agent would. */
export interface RawStream {
  frames: BrokerFrame[];
  status: Promise<grpc.StatusObject>;
  stream: grpc.ClientDuplexStream<AgentFrame, BrokerFrame>;
  close(): void;
}

export function openRawStream(address: string, credentials: MeshClientCredentials, options: { hello?: boolean; actions?: string[] } = {}): RawStream {
  const client = createMeshClient(address, credentials);
  const stream = client.connect();
  const frames: BrokerFrame[] = [];
  stream.on('data', (frame: BrokerFrame) => frames.push(frame));
  stream.on('error', () => {});
  const status = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
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
  code: grpc.status;
  details: string;
}

/** One Enroll sent by hand, with whatever fields a stranger chooses, over TLS verified with the broker CA. */
export function rawEnroll(
  address: string,
  caCertificatePem: string,
  request: { token?: string; csrPem?: string; name?: string; previousAgentId?: string; agentVersion?: string },
): Promise<RawEnrollOutcome> {
  const client = createMeshClient(address, { caCertificatePem });
  return new Promise<RawEnrollOutcome>((resolve) => {
    client.enroll(create(EnrollRequestSchema, request), new Metadata(), { deadline: Date.now() + 60_000 }, (error: grpc.ServiceError | null) => {
      client.close();
      resolve(error ? { code: error.code, details: error.details } : { code: 0, details: 'enrolled' });
    });
  });
}

import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { toFleetError } from '../../shared/errors/fleet-error.ts';
import { EnrollResponseSchema, Mesh } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { toGrpcStatus } from '../../shared/grpc/grpc-status.ts';
import { addService } from '../../shared/grpc/service-adapter.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { MAX_MESSAGE_BYTES } from '../../shared/version.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { Enrollment } from '../enrollment/enrollment.ts';
import { joinTokenId } from '../enrollment/join-tokens.ts';
import type { ServerIdentity } from '../pki/broker-authority.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { createConnectHandler } from './connect-handler.ts';
import { StaticCertificateProvider } from './static-certificate-provider.ts';

export interface MeshServerOptions {
  listen: string;
  caCertificatePem: string;
  serverIdentity: ServerIdentity;
  store: BrokerStore;
  registry: AgentRegistry;
  enrollment: Enrollment;
  heartbeatIntervalMs: number;
  log: Logger;
}

/** The broker's gRPC endpoint: Enroll for newcomers, Connect for enrolled agents, one TLS port. */
export class MeshServer {
  private server: grpc.Server | undefined;

  constructor(private readonly options: MeshServerOptions) {}

  /** Whether the port is bound and serving (readiness). */
  get listening(): boolean {
    return this.server !== undefined;
  }

  /** Binds and serves; resolves with the bound port (useful with port 0). */
  async start(): Promise<number> {
    const { options } = this;
    const server = new grpc.Server({
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      'grpc.keepalive_time_ms': 20_000,
      'grpc.keepalive_timeout_ms': 10_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.enable_channelz': 0,
    });
    addService(server, Mesh, {
      enroll: (call, callback) => {
        const request = call.request;
        try {
          const result = options.enrollment.enroll({
            token: request.token,
            csrPem: request.csrPem,
            name: request.name,
            previousAgentId: request.previousAgentId,
            agentVersion: request.agentVersion,
          });
          options.registry.refreshFromStore(result.agentId);
          callback(
            null,
            create(EnrollResponseSchema, {
              agentId: result.agentId,
              name: result.name,
              certificatePem: result.certificatePem,
              caCertificatePem: result.caCertificatePem,
              notAfterUnixMs: BigInt(result.notAfter.getTime()),
              labels: result.labels,
            }),
          );
        } catch (error) {
          const failure = toFleetError(error);
          options.log.warn('enrollment refused', { peer: call.getPeer(), name: request.name, token_id: joinTokenId(request.token), reason: failure.message });
          callback(toGrpcStatus(failure));
        }
      },
      connect: createConnectHandler(options),
    });
    // The chain carries the CA too, so an enrolling agent can read it and check it against its pin.
    const certificates = new StaticCertificateProvider(Buffer.from(options.caCertificatePem), {
      certificate: Buffer.from(`${options.serverIdentity.certificatePem}${options.caCertificatePem}`),
      privateKey: Buffer.from(options.serverIdentity.privateKeyPem),
    });
    const credentials = grpc.experimental.createCertificateProviderServerCredentials(certificates, certificates, false);
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(options.listen, credentials, (error, bound) => (error ? reject(error) : resolve(bound)));
    });
    this.server = server;
    return port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 2000);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

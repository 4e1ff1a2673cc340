import { isIP } from 'node:net';
import { checkServerIdentity } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { Mesh } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { createClient, type ServiceClient } from '../../shared/grpc/service-adapter.ts';
import { MAX_MESSAGE_BYTES } from '../../shared/version.ts';

export type MeshClient = ServiceClient<(typeof Mesh)['method']>;

export interface MeshClientCredentials {
  caCertificatePem: string;
  /** Absent while enrolling: the agent has no certificate yet. */
  privateKeyPem?: string;
  certificatePem?: string;
}

/** The TLS server name sent when the broker is dialled by IP address (no server name may be an address). */
const ADDRESS_SERVER_NAME = 'fleetmesh-broker';

/** `host` of `host:port` or `[v6]:port`. */
function hostOf(address: string): string {
  const bracketed = /^\[([^\]]+)\]:\d+$/.exec(address);
  if (bracketed) return bracketed[1] as string;
  return address.replace(/:\d+$/, '');
}

/**
 * The TLS credentials of one identity for one broker host, built once and
 * reused by every dial: building them parses the key and certificates, which
 * every reconnect attempt paid again (a fleet retrying together paid it
 * thousands of times a second in the benchmark's single process).
 */
const credentialsCache = new WeakMap<MeshClientCredentials, Map<string, grpc.ChannelCredentials>>();

function channelCredentials(credentials: MeshClientCredentials, host: string, byAddress: boolean): grpc.ChannelCredentials {
  let byHost = credentialsCache.get(credentials);
  if (!byHost) {
    byHost = new Map();
    credentialsCache.set(credentials, byHost);
  }
  const key = byAddress ? host : '';
  let built = byHost.get(key);
  if (!built) {
    built = grpc.credentials.createSsl(
      Buffer.from(credentials.caCertificatePem),
      credentials.privateKeyPem ? Buffer.from(credentials.privateKeyPem) : null,
      credentials.certificatePem ? Buffer.from(credentials.certificatePem) : null,
      // grpc-js sends the dialled host as the TLS server name, which RFC 6066 forbids for an address (Node warns, DEP0123):
      // dialled by address, it sends a placeholder name instead and still checks the certificate against the address.
      byAddress ? { checkServerIdentity: (_name, certificate) => checkServerIdentity(host, certificate) } : {},
    );
    byHost.set(key, built);
  }
  return built;
}

/**
 * A channel to the broker. Each agent gets its own subchannel pool so that
 * simulated agents in one process do not share a connection (DESIGN §10);
 * retries are off because the agent stream is re-opened by our own loop, and
 * keepalive is on so a dead broker is noticed instead of hanging the stream.
 */
export function createMeshClient(address: string, credentials: MeshClientCredentials): MeshClient {
  const host = hostOf(address);
  const byAddress = isIP(host) !== 0;
  return createClient(Mesh, address, channelCredentials(credentials, host, byAddress), {
    ...(byAddress ? { 'grpc.ssl_target_name_override': ADDRESS_SERVER_NAME } : {}),
    'grpc.use_local_subchannel_pool': 1,
    'grpc.enable_retries': 0,
    'grpc.keepalive_time_ms': 20_000,
    // A broker whose event loop is held answers no ping: one serving 10,000 agents was seen held for
    // 10.6 s. Leaving it then only adds a reconnect (a TLS handshake it must serve) to what held it;
    // a broker gone for good is still noticed within 40 s, and one killed at once by its reset.
    'grpc.keepalive_timeout_ms': 20_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.enable_channelz': 0,
    // The broker's address is a name or an address, never a service config in DNS: no TXT query on every dial.
    'grpc.service_config_disable_resolution': 1,
    'grpc.initial_reconnect_backoff_ms': 500,
    'grpc.max_reconnect_backoff_ms': 30_000,
  }) as MeshClient;
}

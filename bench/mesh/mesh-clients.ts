import * as grpc from '@grpc/grpc-js';
import { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { Dispatcher } from '../../agent/dispatcher/dispatcher.ts';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { FLEETMESH_VERSION, PROTOCOL_VERSION } from '../../shared/version.ts';
import { announcedActions, BENCH_SAMPLE } from '../fleet/bench-sample.ts';
import type { preEnroll } from './bench-fleet.ts';
import { ECHO_REPLY_BYTES, ECHO_SERVICE } from './echo-service.ts';

const EchoClient = grpc.makeGenericClientConstructor(ECHO_SERVICE, 'Echo');

/** How long a bare stream that failed waits before it opens again. */
const ECHO_RETRY_MS = 1000;

export type Enrolled = Awaited<ReturnType<typeof preEnroll>>;

/** A simulated agent: the real connection loop and dispatcher, answering agent.info from memory. */
export function simulatedAgent(identity: Enrolled['agents'][number], shared: { keys: { privateKeyPem: string }; caCertificatePem: string }, address: string) {
  const dispatcher = new Dispatcher(silentLogger);
  const startedAt = Date.now();
  dispatcher.register(agentInfo, async () => ({
    payload: {
      agent_id: identity.agentId,
      name: identity.name,
      version: FLEETMESH_VERSION,
      protocol_version: PROTOCOL_VERSION,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      started_at_unix_ms: startedAt,
      collectors: [
        { name: 'system', available: true, reason: '' },
        { name: 'docker', available: true, reason: '' },
      ],
      labels: { role: 'sim', zone: 'bench' },
      facts: { hostname: identity.name, os: 'Debian GNU/Linux 12 (bookworm)', kernel: '6.1.0', arch: 'x64', cpu_cores: 8, memory_total_bytes: 8_200_000_000 },
      sample: BENCH_SAMPLE,
      certificate_not_after_unix_ms: identity.notAfter.getTime(),
    },
  }));
  return new BrokerConnection({
    dataDir: '/nonexistent',
    identity: { ...identity, brokerAddress: address, caCertificatePem: shared.caCertificatePem, privateKeyPem: shared.keys.privateKeyPem },
    dispatcher,
    hello: () => ({ agentVersion: FLEETMESH_VERSION, protocolVersion: PROTOCOL_VERSION, actions: announcedActions(dispatcher.actions()), name: identity.name }),
    sample: () => BENCH_SAMPLE,
    log: silentLogger,
    backoffBaseMs: 500,
    backoffCapMs: 30_000,
  });
}

/** N bare grpc-js echo streams over mutual TLS, each on its own channel, answering every message with a reply. */
export function connectEchoStreams(port: number, enrolled: Pick<Enrolled, 'agents' | 'keys' | 'caCertificatePem'>, clients: grpc.Client[]): void {
  const reply = Buffer.alloc(ECHO_REPLY_BYTES, 2);
  for (const agent of enrolled.agents) {
    const credentials = grpc.credentials.createSsl(
      Buffer.from(enrolled.caCertificatePem),
      Buffer.from(enrolled.keys.privateKeyPem),
      Buffer.from(agent.certificatePem),
    );
    const client = new EchoClient(`localhost:${port}`, credentials, {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.enable_retries': 0,
      'grpc.keepalive_time_ms': 20_000,
      'grpc.keepalive_timeout_ms': 20_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.enable_channelz': 0,
      // The agent's channel's reconnect backoff (agent/connection/mesh-client.ts), not grpc-js's default of up to 120 s.
      'grpc.initial_reconnect_backoff_ms': 500,
      'grpc.max_reconnect_backoff_ms': 30_000,
    });
    clients.push(client);
    let closed = false;
    const open = () => {
      const stream = (client as unknown as { stream: () => grpc.ClientDuplexStream<Buffer, Buffer> }).stream();
      // A stream that failed (a handshake that timed out while thousands connect at once) opens again, as an agent's would.
      stream.on('error', () => {
        if (!closed) setTimeout(open, ECHO_RETRY_MS);
      });
      stream.on('data', () => stream.write(reply));
      // The stream opens on the first message: announce ourselves as an agent's Hello does.
      stream.write(Buffer.alloc(1));
    };
    open();
    const close = client.close.bind(client);
    client.close = () => {
      closed = true;
      close();
    };
  }
}

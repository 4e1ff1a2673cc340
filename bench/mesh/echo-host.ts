/**
 * The bare baseline server: grpc-js with mutual TLS (same CA, same server
 * certificate, same server options as the broker's mesh endpoint) and one echo
 * stream per client. A round writes one message to every stream and waits for
 * every reply. Driven over IPC by bench/mesh/mesh-bench.ts, like broker-host.ts.
 */
import * as grpc from '@grpc/grpc-js';
import { BrokerAuthority, serverNames } from '../../broker/pki/broker-authority.ts';
import { MAX_MESSAGE_BYTES } from '../../shared/version.ts';
import { ECHO_CALL_BYTES, ECHO_SERVICE } from './echo-service.ts';

type Request = { id: number; type: 'stats'; gc?: boolean } | { id: number; type: 'fanout' } | { id: number; type: 'stop' };

const dataDir = process.argv[2] ?? '';
const authority = await BrokerAuthority.open(dataDir);
const identity = await authority.serverIdentity(dataDir, serverNames(['localhost']));
const streams = new Set<grpc.ServerDuplexStream<Buffer, Buffer>>();
let onReply: (() => void) | undefined;

const server = new grpc.Server({
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.keepalive_time_ms': 20_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.enable_channelz': 0,
});
server.addService(ECHO_SERVICE, {
  stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
    streams.add(call);
    call.on('error', () => {});
    call.on('data', () => onReply?.());
    call.on('close', () => streams.delete(call));
    call.on('end', () => {
      streams.delete(call);
      call.end();
    });
  },
});
const credentials = grpc.ServerCredentials.createSsl(
  Buffer.from(authority.ca.certificatePem),
  [{ cert_chain: Buffer.from(`${identity.certificatePem}${authority.ca.certificatePem}`), private_key: Buffer.from(identity.privateKeyPem) }],
  true,
);
const port = await new Promise<number>((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', credentials, (error, bound) => (error ? reject(error) : resolve(bound))),
);

/** CPU, memory and streams now; after a full collection when `gc` is set (the points figures are read at, not progress polls). */
function stats(gc = false) {
  if (gc) (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  return { cpu_us: cpu.user + cpu.system, rss_bytes: process.memoryUsage().rss, heap_used_bytes: process.memoryUsage().heapUsed, online: streams.size };
}

process.on('message', async (message: Request) => {
  if (message.type === 'stats') {
    process.send?.({ id: message.id, ...stats(message.gc) });
  } else if (message.type === 'fanout') {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const total = streams.size;
    await new Promise<void>((resolve) => {
      let replies = 0;
      onReply = () => {
        replies += 1;
        if (replies === total) resolve();
      };
      // A fresh buffer per stream, as each Call frame is encoded on its own.
      for (const stream of streams) stream.write(Buffer.alloc(ECHO_CALL_BYTES, 1));
    });
    onReply = undefined;
    const durationMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    process.send?.({ id: message.id, duration_ms: durationMs, cpu_us: cpu.user + cpu.system, ok: total, total });
  } else if (message.type === 'stop') {
    server.forceShutdown();
    process.send?.({ id: message.id });
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(1));
process.send?.({ id: 0, ready: true, port });

import { create } from '@bufbuild/protobuf';
import type { HostSample } from '../catalog/sample.ts';
import { type Sample, SampleSchema } from '../gen/fleetmesh/v1/mesh_pb.ts';

/** A heartbeat sample onto the wire: a figure that is null stays absent, never zero. */
export function sampleToWire(sample: HostSample): Sample {
  return create(SampleSchema, {
    ...(sample.cpu_percent === null ? {} : { cpuPercent: sample.cpu_percent }),
    ...(sample.memory_percent === null ? {} : { memoryPercent: sample.memory_percent }),
    ...(sample.disk_percent === null ? {} : { diskPercent: sample.disk_percent }),
    diskMount: sample.disk_mount ?? '',
    ...(sample.containers_running === null ? {} : { containersRunning: sample.containers_running }),
    ...(sample.containers_total === null ? {} : { containersTotal: sample.containers_total }),
    ...(sample.load_1 === null ? {} : { load1: sample.load_1 }),
    memoryUsedBytes: BigInt(Math.max(0, Math.round(sample.memory_used_bytes ?? 0))),
    memoryTotalBytes: BigInt(Math.max(0, Math.round(sample.memory_total_bytes ?? 0))),
    sampledUnixMs: BigInt(sample.sampled_at_unix_ms),
  });
}

/** A heartbeat sample off the wire, as the broker keeps and shows it. */
export function sampleFromWire(sample: Sample | undefined, receivedAt: number): HostSample | null {
  if (!sample) return null;
  const known = sample.memoryTotalBytes > 0n;
  return {
    cpu_percent: sample.cpuPercent ?? null,
    memory_percent: sample.memoryPercent ?? null,
    memory_used_bytes: known ? Number(sample.memoryUsedBytes) : null,
    memory_total_bytes: known ? Number(sample.memoryTotalBytes) : null,
    disk_percent: sample.diskPercent ?? null,
    disk_mount: sample.diskMount || null,
    load_1: sample.load1 ?? null,
    containers_running: sample.containersRunning ?? null,
    containers_total: sample.containersTotal ?? null,
    sampled_at_unix_ms: sample.sampledUnixMs > 0n ? Number(sample.sampledUnixMs) : receivedAt,
  };
}

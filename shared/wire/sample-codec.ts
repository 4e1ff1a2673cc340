import { create } from '@bufbuild/protobuf';
import type { HostSample } from '../catalog/sample.ts';
import { type ContainerSample, ContainerSampleSchema, type Sample, SampleSchema } from '../gen/fleetmesh/v1/mesh_pb.ts';

/** One container's figures for the broker's metrics history. */
export interface ContainerFigures {
  id: string;
  name: string;
  service: string | null;
  cpu_percent: number | null;
  memory_usage_bytes: number | null;
  net_rx_bytes: number | null;
  net_tx_bytes: number | null;
}

const big = (value: number) => BigInt(Math.max(0, Math.round(value)));

/** A heartbeat sample onto the wire: a figure that is null stays absent, never zero. */
export function sampleToWire(sample: HostSample, containers: readonly ContainerFigures[] = []): Sample {
  return create(SampleSchema, {
    ...(sample.cpu_percent === null ? {} : { cpuPercent: sample.cpu_percent }),
    ...(sample.memory_percent === null ? {} : { memoryPercent: sample.memory_percent }),
    ...(sample.disk_percent === null ? {} : { diskPercent: sample.disk_percent }),
    diskMount: sample.disk_mount ?? '',
    ...(sample.containers_running === null ? {} : { containersRunning: sample.containers_running }),
    ...(sample.containers_total === null ? {} : { containersTotal: sample.containers_total }),
    ...(sample.load_1 === null ? {} : { load1: sample.load_1 }),
    ...(sample.net_rx_bytes === null ? {} : { netRxBytes: big(sample.net_rx_bytes) }),
    ...(sample.net_tx_bytes === null ? {} : { netTxBytes: big(sample.net_tx_bytes) }),
    memoryUsedBytes: big(sample.memory_used_bytes ?? 0),
    memoryTotalBytes: big(sample.memory_total_bytes ?? 0),
    sampledUnixMs: BigInt(sample.sampled_at_unix_ms),
    containers: containers.map((c) =>
      create(ContainerSampleSchema, {
        id: c.id,
        name: c.name,
        service: c.service ?? '',
        ...(c.cpu_percent === null ? {} : { cpuPercent: c.cpu_percent }),
        ...(c.memory_usage_bytes === null ? {} : { memoryUsageBytes: big(c.memory_usage_bytes) }),
        ...(c.net_rx_bytes === null ? {} : { netRxBytes: big(c.net_rx_bytes) }),
        ...(c.net_tx_bytes === null ? {} : { netTxBytes: big(c.net_tx_bytes) }),
      }),
    ),
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
    net_rx_bytes: sample.netRxBytes === undefined ? null : Number(sample.netRxBytes),
    net_tx_bytes: sample.netTxBytes === undefined ? null : Number(sample.netTxBytes),
    sampled_at_unix_ms: sample.sampledUnixMs > 0n ? Number(sample.sampledUnixMs) : receivedAt,
  };
}

/** The container figures of a heartbeat, when it carries them. */
export function containersFromWire(containers: readonly ContainerSample[]): ContainerFigures[] {
  return containers.map((c) => ({
    id: c.id,
    name: c.name,
    service: c.service || null,
    cpu_percent: c.cpuPercent ?? null,
    memory_usage_bytes: c.memoryUsageBytes === undefined ? null : Number(c.memoryUsageBytes),
    net_rx_bytes: c.netRxBytes === undefined ? null : Number(c.netRxBytes),
    net_tx_bytes: c.netTxBytes === undefined ? null : Number(c.netTxBytes),
  }));
}

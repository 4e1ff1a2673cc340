/**
 * What a report remembers of a host, one file per report. A section is null
 * when its collector did not answer: the comparison then says the section was
 * skipped instead of finding everything in it gone.
 */
export interface HostSnapshot {
  schema_version: 1;
  taken_at_unix_ms: number;
  containers: SnapshotContainer[] | null;
  /** The host's listening sockets other machines can reach, as `tcp 0.0.0.0:22`. */
  listening: string[] | null;
  disks: { mount: string; usage_percent: number }[] | null;
  zombies: number | null;
  cpu_percent: number | null;
  memory_percent: number | null;
}

export interface SnapshotContainer {
  id: string;
  name: string;
  image: string;
  state: string;
  health: string | null;
  restart_count: number;
  /** Published ports, as `0.0.0.0:8080->80/tcp`, sorted. */
  ports: string[];
}

/** The sections of a snapshot, as homebutler names them in failed_collectors. */
export type SnapshotSection = 'docker' | 'ports' | 'processes' | 'disks';

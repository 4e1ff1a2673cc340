import { posix } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { EngineStats } from '../../agent/engine/engine-stats.ts';
import { engineRefusal } from './engine-refusal.ts';
import { entriesOf, type TarEntry, tarOf } from './tar-entries.ts';

export type Labels = Record<string, string>;

/** The engine's zero time, which it writes for "never" (a container not started, or not finished). */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** A log line a fake container wrote, with the time the engine stamped on it. */
export interface FakeLogLine {
  stream: 'stdout' | 'stderr';
  text: string;
  /** RFC 3339; the time it was written when not given. */
  at?: string;
}

/** A container of the fake engine: the state its API answers from, which a test may change directly. */
export interface FakeContainer {
  id: string;
  name: string;
  image: string;
  imageId: string;
  labels: Labels;
  state: 'created' | 'running' | 'paused' | 'restarting' | 'exited';
  exitCode: number;
  oomKilled: boolean;
  startedAt: string;
  finishedAt: string;
  createdUnixS: number;
  restartCount: number;
  health: 'starting' | 'healthy' | 'unhealthy' | undefined;
  healthcheck: { Test?: string[] } | undefined;
  tty: boolean;
  env: string[];
  cmd: string[];
  entrypoint: string[] | undefined;
  workingDir: string;
  user: string;
  ports: { private: number; public?: number; protocol: 'tcp' | 'udp' }[];
  mounts: ({ type: 'volume'; volume: string; destination: string; readOnly?: boolean } | { type: 'bind'; source: string; destination: string })[];
  logs: FakeLogLine[];
  /** Files inside the container, by absolute path (what the archive endpoint reads). */
  files: Map<string, string>;
  stats: EngineStats | undefined;
  processes: { titles: string[]; rows: string[][] };
}

/** The files of a volume, by path inside it; undefined for a volume the engine does not have. */
export type VolumeFiles = (volume: string) => Map<string, Buffer> | undefined;

/** One frame of the engine's multiplexed log stream (a container without a TTY). */
export function logFrame(stream: 'stdout' | 'stderr', text: string): Buffer {
  const payload = Buffer.from(text);
  const head = Buffer.alloc(8);
  head[0] = stream === 'stdout' ? 1 : 2;
  head.writeUInt32BE(payload.length, 4);
  return Buffer.concat([head, payload]);
}

function mountInfo(mount: FakeContainer['mounts'][number]) {
  return mount.type === 'volume'
    ? {
        Type: 'volume',
        Name: mount.volume,
        Source: `/var/lib/docker/volumes/${mount.volume}/_data`,
        Destination: mount.destination,
        Driver: 'local',
        Mode: 'z',
        RW: !mount.readOnly,
        Propagation: '',
      }
    : { Type: 'bind', Source: mount.source, Destination: mount.destination, Mode: '', RW: true, Propagation: 'rprivate' };
}

/** The container as the engine's list endpoint gives it. */
export function containerRow(c: FakeContainer) {
  return {
    Id: c.id,
    Names: [`/${c.name}`],
    Image: c.image,
    ImageID: c.imageId,
    Command: c.cmd.join(' '),
    Created: c.createdUnixS,
    Ports: c.ports.map((p) => ({
      IP: '0.0.0.0',
      PrivatePort: p.private,
      Type: p.protocol,
      ...(p.public && c.state === 'running' ? { PublicPort: p.public } : {}),
    })),
    Labels: { ...c.labels },
    State: c.state,
    Status:
      c.state === 'running'
        ? `Up 1 minute${c.health ? ` (${c.health === 'starting' ? 'health: starting' : c.health})` : ''}`
        : c.state === 'exited'
          ? `Exited (${c.exitCode}) 1 minute ago`
          : c.state[0]?.toUpperCase() + c.state.slice(1),
    HostConfig: { NetworkMode: 'bridge' },
    NetworkSettings: { Networks: {} },
    Mounts: c.mounts.map(mountInfo),
  };
}

/** The container as the engine's inspect endpoint gives it (the fields collectors read). */
export function containerInspect(container: FakeContainer) {
  return {
    Id: container.id,
    Name: `/${container.name}`,
    Created: new Date(container.createdUnixS * 1000).toISOString(),
    Path: container.entrypoint?.[0] ?? container.cmd[0] ?? '',
    Args: container.entrypoint ? [...container.entrypoint.slice(1), ...container.cmd] : container.cmd.slice(1),
    State: {
      Status: container.state,
      Running: container.state === 'running',
      Paused: container.state === 'paused',
      Restarting: container.state === 'restarting',
      OOMKilled: container.oomKilled,
      Dead: false,
      Pid: container.state === 'running' ? 4242 : 0,
      ExitCode: container.exitCode,
      Error: '',
      StartedAt: container.startedAt,
      FinishedAt: container.finishedAt,
      ...(container.health ? { Health: { Status: container.health, FailingStreak: container.health === 'unhealthy' ? 3 : 0, Log: [] } } : {}),
    },
    Image: container.imageId,
    RestartCount: container.restartCount,
    Config: {
      Image: container.image,
      Env: [...container.env],
      Cmd: [...container.cmd],
      ...(container.entrypoint ? { Entrypoint: [...container.entrypoint] } : {}),
      Labels: { ...container.labels },
      Tty: container.tty,
      WorkingDir: container.workingDir,
      User: container.user,
      ...(container.healthcheck ? { Healthcheck: container.healthcheck } : {}),
    },
    HostConfig: { RestartPolicy: { Name: 'no', MaximumRetryCount: 0 } },
    NetworkSettings: {
      Ports: Object.fromEntries(
        container.ports.map((p) => [
          `${p.private}/${p.protocol}`,
          p.public && container.state === 'running' ? [{ HostIp: '0.0.0.0', HostPort: String(p.public) }] : null,
        ]),
      ),
      Networks: { bridge: { IPAddress: '172.17.0.2', Gateway: '172.17.0.1' } },
    },
    Mounts: container.mounts.map(mountInfo),
  };
}

/** The logs written so far, as the engine answers a request that does not follow: stamped when asked, framed without a TTY. */
export function containerLogs(
  container: FakeContainer,
  options: { stdout?: boolean; stderr?: boolean; timestamps?: boolean; tail?: number; since?: number; until?: number },
): Buffer {
  const seconds = (line: FakeLogLine) => Date.parse(line.at ?? '') / 1000;
  let lines = container.logs
    .filter((line) => (line.stream === 'stdout' ? options.stdout !== false : options.stderr !== false))
    .filter((line) => options.since === undefined || seconds(line) >= options.since)
    .filter((line) => options.until === undefined || seconds(line) <= options.until);
  if (options.tail !== undefined) lines = lines.slice(-options.tail);
  const text = (line: FakeLogLine) => `${options.timestamps ? `${line.at} ` : ''}${line.text}\n`;
  return Buffer.concat(lines.map((line) => (container.tty ? Buffer.from(text(line)) : logFrame(line.stream, text(line)))));
}

/** One-shot: the container's sample; streamed: a first sample without a previous one, then the sample, and the stream stays open. */
export function containerStats(container: FakeContainer, stream: boolean): EngineStats | Readable {
  const sample = container.stats;
  if (!sample) throw engineRefusal(409, `no stats for ${container.name} in this fake engine`);
  if (!stream) return sample;
  const first = { ...sample, precpu_stats: { cpu_usage: { total_usage: 0 }, system_cpu_usage: 0 } };
  const out = new PassThrough();
  out.write(`${JSON.stringify(first)}\n`);
  out.write(`${JSON.stringify(sample)}\n`);
  return out;
}

/** What the archive endpoint gives for a folder: the volumes mounted under it (a backup helper's mounts), as a tar of the folder. */
export function folderArchive(container: FakeContainer, path: string, filesOf: VolumeFiles): Readable {
  const base = posix.basename(path);
  const entries: TarEntry[] = [{ path: `${base}/` }];
  for (const mount of container.mounts) {
    if (mount.type !== 'volume' || !mount.destination.startsWith(`${path}/`)) continue;
    const inside = `${base}/${mount.destination.slice(path.length + 1)}`;
    entries.push({ path: `${inside}/` });
    const files = [...(filesOf(mount.volume) ?? [])].sort(([a], [b]) => a.localeCompare(b));
    for (const [file, content] of files) entries.push({ path: `${inside}/${file}`, content });
  }
  return Readable.from([tarOf(entries)]);
}

/** Writes a tar's files into the volumes mounted where they land; answers with the (empty) response stream. */
export async function unpackArchive(container: FakeContainer, tar: NodeJS.ReadableStream, path: string, filesOf: (volume: string) => Map<string, Buffer>) {
  const chunks: Buffer[] = [];
  for await (const chunk of tar) chunks.push(Buffer.from(chunk as Buffer));
  for (const entry of entriesOf(Buffer.concat(chunks))) {
    if (!entry.content) continue;
    const target = posix.join(path, entry.path);
    const mount = container.mounts.find((m) => m.type === 'volume' && target.startsWith(`${m.destination}/`));
    if (mount?.type !== 'volume') continue;
    filesOf(mount.volume).set(target.slice(mount.destination.length + 1), entry.content);
  }
  return Readable.from([]);
}

/**
 * One file through the archive endpoint, as a sandbox's files are read: HEAD
 * gives only its stat header, GET a tar of the file with the same header.
 */
export function fileArchive(container: FakeContainer, path: string, head: boolean): Readable {
  const text = container.files.get(path);
  if (text === undefined) throw engineRefusal(404, `Could not find the file ${path} in container ${container.name}`);
  const content = Buffer.from(text);
  // The modification time follows the content, so a reader that caches by size and time sees every change.
  let digest = 0;
  for (const byte of content) digest = (digest * 31 + byte) % 1_000_000_007;
  const stat = { name: posix.basename(path), size: content.length, mode: 0o644, mtime: new Date(1_700_000_000_000 + digest).toISOString(), linkTarget: '' };
  const stream = Readable.from(head ? [] : [tarOf([{ path: posix.basename(path), content }])]);
  return Object.assign(stream, { headers: { 'x-docker-container-path-stat': Buffer.from(JSON.stringify(stat)).toString('base64') } });
}

import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { EngineClient } from '../../agent/engine/engine-client.ts';
import type { EngineStats } from '../../agent/engine/engine-stats.ts';
import type { FakeSwarm } from './fake-swarm.ts';
import { entriesOf, type TarEntry, tarOf } from './tar-entries.ts';

type ContainerState = 'created' | 'running' | 'paused' | 'restarting' | 'exited';
type Health = 'starting' | 'healthy' | 'unhealthy';
type Labels = Record<string, string>;

/** A log line a fake container wrote, with the time the engine stamped on it. */
export interface FakeLogLine {
  stream: 'stdout' | 'stderr';
  text: string;
  /** RFC 3339; now when not given. */
  at?: string;
}

/** An event as the engine writes it on its event stream. */
export interface FakeEvent {
  Type: string;
  Action: string;
  Actor: { ID: string; Attributes: Labels };
  time: number;
  timeNano: number;
}

/** A container of the fake engine: the state its API answers from, which a test may change directly. */
export interface FakeContainer {
  id: string;
  name: string;
  image: string;
  imageId: string;
  labels: Labels;
  state: ContainerState;
  exitCode: number;
  oomKilled: boolean;
  startedAt: string;
  finishedAt: string;
  createdUnixS: number;
  restartCount: number;
  health: Health | undefined;
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

export interface FakeVolume {
  name: string;
  driver: string;
  labels: Labels;
  options: Record<string, string>;
  /** Its content, by path inside the volume. */
  files: Map<string, Buffer>;
}

/** An image the fake engine holds, and how a container started from it behaves. */
export interface FakeImage {
  id: string;
  tags: string[];
  /** A container of it exits at once with this code instead of running. */
  exitCode?: number;
  /** What a health check of its containers reports once started (healthy when not given). */
  health?: Health;
}

const NANOS_PER_MS = 1_000_000;
const ZERO_TIME = '0001-01-01T00:00:00Z';

/** A refusal as docker-modem reports one: the status code and the engine's own message. */
export function engineRefusal(status: number, message: string): Error {
  return Object.assign(new Error(`(HTTP code ${status}) ${message}`), { statusCode: status, json: { message } });
}

function matchesLabels(labels: Labels, wanted: readonly string[] | undefined): boolean {
  return (wanted ?? []).every((filter) => {
    const [key, value] = filter.split('=', 2) as [string, string | undefined];
    return Object.hasOwn(labels, key) && (value === undefined || labels[key] === value);
  });
}

/** Engine list filters come as an object or, on the wire, as its JSON. */
function filtersOf(options: { filters?: unknown } | undefined): Record<string, string[]> {
  const filters = options?.filters;
  if (!filters) return {};
  return (typeof filters === 'string' ? JSON.parse(filters) : filters) as Record<string, string[]>;
}

function frame(stream: 'stdout' | 'stderr', text: string): Buffer {
  const payload = Buffer.from(text);
  const head = Buffer.alloc(8);
  head[0] = stream === 'stdout' ? 1 : 2;
  head.writeUInt32BE(payload.length, 4);
  return Buffer.concat([head, payload]);
}

/**
 * A Docker engine in memory, for the collectors' unit tests: it serves the
 * slice of dockerode the agent's collectors call (`client`, an EngineClient),
 * answering from containers, volumes and images a test sets up, writing the
 * engine's events as their state changes, and refusing as the engine does
 * (404 for what is not there, 304 for a start of a running container, 409 for
 * a conflict). `stopEngine()` makes every call fail as an unreachable socket's.
 * A swarm manager's endpoints are served by a FakeSwarm given to it.
 */
export class FakeEngine {
  readonly containers = new Map<string, FakeContainer>();
  readonly volumes = new Map<string, FakeVolume>();
  readonly images: FakeImage[] = [];
  /** Every event the engine wrote, oldest first, as the engine writes them. */
  readonly events: FakeEvent[] = [];
  private readonly followers = new Set<{ stream: PassThrough; types: readonly string[] | undefined }>();
  private readonly logFollowers = new Map<string, Set<PassThrough>>();
  private reachable = true;
  swarm: FakeSwarm | undefined;

  constructor(readonly hostname = 'fake-host') {}

  /**
   * The engine as the collectors see it. dockerode's methods also have callback
   * forms a promise-only fake cannot take; the collectors call the promise forms.
   */
  get client(): EngineClient {
    const client = {
      version: () => this.answer(() => ({ Version: '27.0.0', ApiVersion: '1.46' })),
      listContainers: (options?: { all?: boolean; filters?: unknown }) => this.answer(() => this.listContainers(options)),
      listVolumes: (options?: { filters?: unknown }) => this.answer(() => this.listVolumes(options)),
      listImages: () => this.answer(() => this.images.map((image) => ({ Id: image.id, RepoTags: image.tags }))),
      getContainer: (id: string) => this.containerHandle(id),
      getVolume: (name: string) => this.volumeHandle(name),
      getImage: (name: string) => ({
        inspect: () => this.answer(() => this.inspectImage(name)),
      }),
      createContainer: (options: Record<string, unknown>) => this.answer(() => this.containerHandle(this.create(options).id)),
      createVolume: (options: { Name: string; Labels?: Labels }) =>
        this.answer(() => this.volumeInfo(this.addVolume(options.Name, { labels: options.Labels ?? {} }))),
      getEvents: (options?: { since?: number; filters?: { type?: string[] } }) => this.answer(() => this.follow(options)),
      modem: { dial: (options: DialOptions, callback: (error: unknown, data?: unknown) => void) => this.dial(options, callback) },
    };
    return client as unknown as EngineClient;
  }

  /** The engine goes away: calls fail without a status code, and open event streams end. */
  stopEngine(): void {
    this.reachable = false;
    for (const follower of this.followers) follower.stream.destroy();
    this.followers.clear();
  }

  startEngine(): void {
    this.reachable = true;
  }

  addImage(tag: string, behaviour: Omit<FakeImage, 'id' | 'tags'> = {}): FakeImage {
    const image: FakeImage = { id: `sha256:${randomBytes(32).toString('hex')}`, tags: [tag], ...behaviour };
    this.images.push(image);
    return image;
  }

  addVolume(name: string, spec: { labels?: Labels; options?: Record<string, string>; driver?: string; files?: Record<string, string> } = {}): FakeVolume {
    const existing = this.volumes.get(name);
    if (existing) return existing;
    const volume: FakeVolume = {
      name,
      driver: spec.driver ?? 'local',
      labels: spec.labels ?? {},
      options: spec.options ?? {},
      files: new Map(Object.entries(spec.files ?? {}).map(([path, text]) => [path, Buffer.from(text)])),
    };
    this.volumes.set(name, volume);
    return volume;
  }

  /** A container as if it had been created (and started, unless its state says otherwise) before the test looked. */
  addContainer(name: string, spec: Partial<Omit<FakeContainer, 'id' | 'name' | 'files'>> & { files?: Record<string, string> } = {}): FakeContainer {
    const image = spec.image ?? 'busybox:1';
    const now = new Date().toISOString();
    const { files, ...rest } = spec;
    const container: FakeContainer = {
      id: randomBytes(32).toString('hex'),
      name,
      image,
      imageId: this.images.find((i) => i.tags.includes(image))?.id ?? `sha256:${randomBytes(32).toString('hex')}`,
      labels: {},
      state: 'running',
      exitCode: 0,
      oomKilled: false,
      startedAt: now,
      finishedAt: ZERO_TIME,
      createdUnixS: Math.floor(Date.now() / 1000),
      restartCount: 0,
      health: undefined,
      healthcheck: undefined,
      tty: false,
      env: [],
      cmd: ['sleep', '3600'],
      entrypoint: undefined,
      workingDir: '',
      user: '',
      ports: [],
      mounts: [],
      logs: [],
      stats: undefined,
      processes: { titles: ['PID', 'USER', 'COMMAND'], rows: [['1', 'root', 'sleep 3600']] },
      ...rest,
      files: new Map(Object.entries(files ?? {})),
    };
    container.logs = container.logs.map((line) => ({ ...line, at: line.at ?? now }));
    for (const mount of container.mounts) if (mount.type === 'volume') this.addVolume(mount.volume);
    this.containers.set(container.id, container);
    return container;
  }

  /** The container of this name or id (unique id prefixes too, as the engine takes them). */
  container(wanted: string): FakeContainer {
    const name = wanted.replace(/^\//, '');
    const found =
      [...this.containers.values()].find((c) => c.id === wanted || c.name === name) ??
      (/^[0-9a-f]+$/.test(wanted) ? [...this.containers.values()].filter((c) => c.id.startsWith(wanted)) : []).at(0);
    if (!found) throw engineRefusal(404, `No such container: ${wanted}`);
    return found;
  }

  /** Writes an engine event, to the history and every follower of its type. */
  emit(type: string, action: string, actor: { id: string; attributes: Labels }): void {
    const nowMs = Date.now();
    const event: FakeEvent = {
      Type: type,
      Action: action,
      Actor: { ID: actor.id, Attributes: actor.attributes },
      time: Math.floor(nowMs / 1000),
      timeNano: nowMs * NANOS_PER_MS,
    };
    this.events.push(event);
    for (const follower of this.followers) if (!follower.types || follower.types.includes(type)) follower.stream.write(`${JSON.stringify(event)}\n`);
  }

  /** A container event, its actor named as the engine names it (name, image, labels, and the exit code of a die). */
  emitContainer(container: FakeContainer, action: string, extra: Labels = {}): void {
    this.emit('container', action, { id: container.id, attributes: { ...container.labels, name: container.name, image: container.image, ...extra } });
  }

  /** A line a running container writes now: in its logs, and to whoever follows them. */
  writeLog(container: FakeContainer, line: FakeLogLine): void {
    const stamped = { ...line, at: line.at ?? new Date().toISOString() };
    container.logs.push(stamped);
    for (const stream of this.logFollowers.get(container.id) ?? []) {
      const text = `${stamped.at} ${stamped.text}\n`;
      stream.write(container.tty ? Buffer.from(text) : frame(stamped.stream, text));
    }
  }

  /** A container's end as the engine reports it: die with its exit code (an OOM kill first), then stop. */
  exit(container: FakeContainer, exitCode: number, oomKilled = false): void {
    container.state = 'exited';
    container.exitCode = exitCode;
    container.oomKilled = oomKilled;
    container.finishedAt = new Date().toISOString();
    if (oomKilled) this.emitContainer(container, 'oom');
    this.emitContainer(container, 'die', { exitCode: String(exitCode) });
  }

  /** A start of a container (by a restart policy or a call): a new run, with a health check's first verdict. */
  run(container: FakeContainer): void {
    const image = this.images.find((i) => i.id === container.imageId || i.tags.includes(container.image));
    container.startedAt = new Date().toISOString();
    container.finishedAt = ZERO_TIME;
    container.oomKilled = false;
    container.state = 'running';
    container.health = container.healthcheck?.Test?.length && container.healthcheck.Test[0] !== 'NONE' ? (image?.health ?? 'healthy') : undefined;
    this.emitContainer(container, 'start');
    if (image?.exitCode !== undefined) this.exit(container, image.exitCode);
  }

  private async answer<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.reachable) throw Object.assign(new Error('connect ECONNREFUSED /fake/docker.sock'), { code: 'ECONNREFUSED' });
    return work();
  }

  private listContainers(options: { all?: boolean; filters?: unknown } | undefined) {
    const filters = filtersOf(options);
    return [...this.containers.values()]
      .filter((c) => options?.all === true || c.state === 'running')
      .filter((c) => matchesLabels(c.labels, filters.label))
      .filter((c) => !filters.status || filters.status.includes(c.state))
      .filter((c) => !filters.volume || c.mounts.some((m) => m.type === 'volume' && filters.volume?.includes(m.volume)))
      .map((c) => ({
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
        Mounts: c.mounts.map((m) => this.mountInfo(m)),
      }));
  }

  private mountInfo(mount: FakeContainer['mounts'][number]) {
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

  private inspect(container: FakeContainer) {
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
      Mounts: container.mounts.map((m) => this.mountInfo(m)),
    };
  }

  private create(options: Record<string, unknown>): FakeContainer {
    const imageName = String(options.Image);
    const image = this.images.find((i) => i.id === imageName || i.tags.includes(imageName));
    if (!image) throw engineRefusal(404, `No such image: ${imageName}`);
    const name = typeof options.name === 'string' ? options.name : `fake_${randomBytes(3).toString('hex')}`;
    if ([...this.containers.values()].some((c) => c.name === name)) {
      throw engineRefusal(409, `Conflict. The container name "/${name}" is already in use by container "${this.container(name).id}".`);
    }
    const host = (options.HostConfig ?? {}) as {
      Mounts?: { Type: string; Source: string; Target: string; ReadOnly?: boolean }[];
      PortBindings?: Record<string, { HostPort: string }[]>;
    };
    const container = this.addContainer(name, {
      image: imageName,
      state: 'created',
      startedAt: ZERO_TIME,
      labels: { ...((options.Labels ?? {}) as Labels) },
      env: [...((options.Env ?? []) as string[])],
      cmd: [...((options.Cmd ?? []) as string[])],
      entrypoint: options.Entrypoint as string[] | undefined,
      workingDir: String(options.WorkingDir ?? ''),
      user: String(options.User ?? ''),
      healthcheck: options.Healthcheck as { Test?: string[] } | undefined,
      mounts: (host.Mounts ?? []).map((m) =>
        m.Type === 'volume'
          ? { type: 'volume' as const, volume: m.Source, destination: m.Target, readOnly: m.ReadOnly === true }
          : { type: 'bind' as const, source: m.Source, destination: m.Target },
      ),
      ports: Object.entries(host.PortBindings ?? {}).map(([spec, bindings]) => {
        const [port, protocol] = spec.split('/') as [string, string];
        return { private: Number(port), protocol: protocol === 'udp' ? 'udp' : 'tcp', ...(bindings[0] ? { public: Number(bindings[0].HostPort) } : {}) };
      }),
    });
    container.imageId = image.id;
    this.emitContainer(container, 'create');
    return container;
  }

  private containerHandle(wanted: string) {
    const found = () => this.container(wanted);
    return {
      id: wanted,
      inspect: () => this.answer(() => this.inspect(found())),
      start: () =>
        this.answer(() => {
          const container = found();
          if (container.state === 'running') throw engineRefusal(304, 'container already started');
          this.run(container);
        }),
      stop: () =>
        this.answer(() => {
          const container = found();
          if (container.state !== 'running') throw engineRefusal(304, 'container already stopped');
          this.exit(container, 0);
          this.emitContainer(container, 'stop');
        }),
      restart: () =>
        this.answer(() => {
          const container = found();
          if (container.state === 'running') this.exit(container, 0);
          this.run(container);
          this.emitContainer(container, 'restart');
        }),
      remove: (options?: { force?: boolean }) =>
        this.answer(() => {
          const container = found();
          if (container.state === 'running' && !options?.force) {
            throw engineRefusal(409, `You cannot remove a running container ${container.id}. Stop the container before attempting removal or force remove`);
          }
          this.containers.delete(container.id);
          this.emitContainer(container, 'destroy');
        }),
      top: () =>
        this.answer(() => {
          const container = found();
          if (container.state !== 'running') throw engineRefusal(409, `Container ${container.id} is not running`);
          return { Titles: container.processes.titles, Processes: container.processes.rows };
        }),
      logs: (options: { follow?: boolean; stdout?: boolean; stderr?: boolean; timestamps?: boolean; tail?: number; since?: number; until?: number }) =>
        this.answer(() => this.logs(found(), options)),
      stats: (options?: { stream?: boolean }) => this.answer(() => this.stats(found(), options?.stream !== false)),
      getArchive: (options: { path: string }) => this.answer(() => Readable.from([this.archiveOf(found(), options.path)])),
      putArchive: (tar: NodeJS.ReadableStream, options: { path: string }) => this.answer(() => this.unpack(found(), tar, options.path)),
    };
  }

  private logs(
    container: FakeContainer,
    options: { follow?: boolean; stdout?: boolean; stderr?: boolean; timestamps?: boolean; tail?: number; since?: number; until?: number },
  ) {
    if (options.follow) {
      const stream = new PassThrough();
      const set = this.logFollowers.get(container.id) ?? new Set();
      set.add(stream);
      this.logFollowers.set(container.id, set);
      stream.on('close', () => set.delete(stream));
      return stream;
    }
    const seconds = (line: FakeLogLine) => Date.parse(line.at ?? '') / 1000;
    let lines = container.logs
      .filter((line) => (line.stream === 'stdout' ? options.stdout !== false : options.stderr !== false))
      .filter((line) => options.since === undefined || seconds(line) >= options.since)
      .filter((line) => options.until === undefined || seconds(line) <= options.until);
    if (options.tail !== undefined) lines = lines.slice(-options.tail);
    const text = (line: FakeLogLine) => `${options.timestamps ? `${line.at} ` : ''}${line.text}\n`;
    return Buffer.concat(lines.map((line) => (container.tty ? Buffer.from(text(line)) : frame(line.stream, text(line)))));
  }

  /** One-shot: the sample; streamed: a first sample without a previous one, then the sample, and the stream stays open. */
  private stats(container: FakeContainer, stream: boolean) {
    const sample = container.stats;
    if (!sample) throw engineRefusal(409, `no stats for ${container.name} in this fake engine`);
    if (!stream) return sample;
    const out = new PassThrough();
    const first = { ...sample, precpu_stats: { cpu_usage: { total_usage: 0 }, system_cpu_usage: 0 } };
    out.write(`${JSON.stringify(first)}\n`);
    out.write(`${JSON.stringify(sample)}\n`);
    return out;
  }

  /** What the archive endpoint gives for a path: the volumes mounted under it (a backup helper's mounts), as a tar of the folder. */
  private archiveOf(container: FakeContainer, path: string): Buffer {
    const base = posix.basename(path);
    const entries: TarEntry[] = [{ path: `${base}/` }];
    for (const mount of container.mounts) {
      if (mount.type !== 'volume' || !mount.destination.startsWith(`${path}/`)) continue;
      const inside = `${base}/${mount.destination.slice(path.length + 1)}`;
      entries.push({ path: `${inside}/` });
      const volume = this.volumes.get(mount.volume);
      for (const [file, content] of [...(volume?.files ?? [])].sort(([a], [b]) => a.localeCompare(b))) entries.push({ path: `${inside}/${file}`, content });
    }
    return tarOf(entries);
  }

  /** Writes a tar's files into the volumes mounted where they land; answers with the (empty) response stream. */
  private async unpack(container: FakeContainer, tar: NodeJS.ReadableStream, path: string): Promise<Readable> {
    const chunks: Buffer[] = [];
    for await (const chunk of tar) chunks.push(Buffer.from(chunk as Buffer));
    for (const entry of entriesOf(Buffer.concat(chunks))) {
      if (!entry.content) continue;
      const target = posix.join(path, entry.path);
      const mount = container.mounts.find((m) => m.type === 'volume' && target.startsWith(`${m.destination}/`));
      if (mount?.type !== 'volume') continue;
      this.addVolume(mount.volume).files.set(target.slice(mount.destination.length + 1), entry.content);
    }
    return Readable.from([]);
  }

  private listVolumes(options: { filters?: unknown } | undefined) {
    const filters = filtersOf(options);
    return { Volumes: [...this.volumes.values()].filter((v) => matchesLabels(v.labels, filters.label)).map((v) => this.volumeInfo(v)), Warnings: [] };
  }

  private volumeInfo(volume: FakeVolume) {
    return {
      Name: volume.name,
      Driver: volume.driver,
      Mountpoint: `/var/lib/docker/volumes/${volume.name}/_data`,
      Labels: { ...volume.labels },
      Scope: 'local',
      Options: { ...volume.options },
    };
  }

  private volumeHandle(name: string) {
    const found = () => {
      const volume = this.volumes.get(name);
      if (!volume) throw engineRefusal(404, `get ${name}: no such volume`);
      return volume;
    };
    return {
      name,
      inspect: () => this.answer(() => this.volumeInfo(found())),
      remove: () =>
        this.answer(() => {
          const volume = found();
          const users = [...this.containers.values()].filter((c) => c.mounts.some((m) => m.type === 'volume' && m.volume === name));
          if (users.length) throw engineRefusal(409, `remove ${name}: volume is in use - [${users.map((c) => c.id).join(', ')}]`);
          this.volumes.delete(volume.name);
        }),
    };
  }

  private inspectImage(name: string) {
    const image = this.images.find((i) => i.id === name || i.tags.includes(name));
    if (!image) throw engineRefusal(404, `No such image: ${name}`);
    return { Id: image.id, RepoTags: image.tags, Config: {} };
  }

  /** An event stream: what the engine remembers since `since`, then each new event of the types asked for. */
  private follow(options: { since?: number; filters?: { type?: string[] } } | undefined): Readable {
    const stream = new PassThrough();
    const follower = { stream, types: options?.filters?.type };
    for (const event of this.events) {
      if ((!follower.types || follower.types.includes(event.Type)) && (options?.since === undefined || event.time >= options.since)) {
        stream.write(`${JSON.stringify(event)}\n`);
      }
    }
    this.followers.add(follower);
    stream.on('close', () => this.followers.delete(follower));
    return stream;
  }

  /** The endpoints collectors call on the modem: a container's archive (sandbox files), and the swarm's. */
  private dial(options: DialOptions, callback: (error: unknown, data?: unknown) => void): void {
    const path = options.path.replace(/\?$/, '');
    const query = (options.options?._query ?? {}) as Record<string, string>;
    queueMicrotask(() => {
      void this.answer(() => {
        const archive = /^\/containers\/([^/]+)\/archive$/.exec(path);
        if (archive) return this.archiveFile(this.container(archive[1] as string), query.path ?? '', options.method === 'HEAD');
        if (this.swarm) return this.swarm.answer(options.method, path, query, options.options?._body, this);
        if (path === '/info') return { Name: this.hostname, Swarm: { LocalNodeState: 'inactive', ControlAvailable: false } };
        throw engineRefusal(404, 'page not found');
      }).then(
        (data) => callback(null, data),
        (error: unknown) => callback(error),
      );
    });
  }

  private archiveFile(container: FakeContainer, path: string, head: boolean): Readable {
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
}

/** What a caller asks of the modem (docker-modem's dial options, the parts the collectors set). */
interface DialOptions {
  path: string;
  method: string;
  options?: { _query?: Record<string, unknown>; _body?: unknown };
  isStream?: boolean;
}

import { randomBytes } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import type { EngineClient } from '../../agent/engine/engine-client.ts';
import { engineRefusal } from './engine-refusal.ts';
import {
  containerInspect,
  containerLogs,
  containerRow,
  containerStats,
  type FakeContainer,
  type FakeLogLine,
  fileArchive,
  folderArchive,
  type Labels,
  logFrame,
  unpackArchive,
  ZERO_TIME,
} from './fake-container.ts';
import { FakeRegistry, pullStream, type RegistryImage } from './fake-registry.ts';
import type { FakeSwarm } from './fake-swarm.ts';

/** An event as the engine writes it on its event stream. */
export interface FakeEvent {
  Type: string;
  Action: string;
  Actor: { ID: string; Attributes: Labels };
  time: number;
  timeNano: number;
}

/** A named volume of the fake engine. */
export interface FakeVolume {
  name: string;
  driver: string;
  labels: Labels;
  options: Record<string, string>;
  /** Its content, by path inside the volume. */
  files: Map<string, Buffer>;
}

/** An image the fake engine holds (as a registry would, plus its tags here), and how a container started from it behaves. */
export interface FakeImage extends RegistryImage {
  tags: string[];
  createdUnixS?: number;
}

/** A network of the fake engine (compose projects make them). */
export interface FakeNetwork {
  id: string;
  name: string;
  labels: Labels;
}

const NANOS_PER_MS = 1_000_000;

/** An engine label filter: each of `key` or `key=value` holds. */
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
  readonly networks = new Map<string, FakeNetwork>();
  /** The registries pulls fetch from. */
  readonly registry = new FakeRegistry();
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
      listImages: (options?: { filters?: unknown }) => this.answer(() => this.listImages(options)),
      listNetworks: (options?: { filters?: unknown }) => this.answer(() => this.listNetworks(options)),
      getContainer: (id: string) => this.containerHandle(id),
      getVolume: (name: string) => this.volumeHandle(name),
      getImage: (name: string) => ({
        inspect: () => this.answer(() => this.inspectImage(name)),
      }),
      getNetwork: (id: string) => this.networkHandle(id),
      pull: (reference: string, options?: { authconfig?: Record<string, unknown> }) => this.answer(() => this.pull(reference, options?.authconfig)),
      pruneImages: (options?: { filters?: unknown }) => this.answer(() => this.pruneImages(options)),
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

  addNetwork(name: string, labels: Labels = {}): FakeNetwork {
    const network = { id: randomBytes(32).toString('hex'), name, labels };
    this.networks.set(network.id, network);
    return network;
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
      stream.write(container.tty ? Buffer.from(text) : logFrame(stamped.stream, text));
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
      .map(containerRow);
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
    // The engine gives a container its image's configuration where the create leaves a field out.
    const own = image.config ?? {};
    const env = new Map([...((own.Env ?? []) as string[]), ...((options.Env ?? []) as string[])].map((entry) => [entry.split('=', 1)[0], entry]));
    const container = this.addContainer(name, {
      image: imageName,
      state: 'created',
      startedAt: ZERO_TIME,
      labels: { ...((own.Labels ?? {}) as Labels), ...((options.Labels ?? {}) as Labels) },
      env: [...env.values()],
      cmd: [...((options.Cmd ?? own.Cmd ?? []) as string[])],
      entrypoint: (options.Entrypoint ?? own.Entrypoint) as string[] | undefined,
      workingDir: String(options.WorkingDir ?? own.WorkingDir ?? ''),
      user: String(options.User ?? own.User ?? ''),
      healthcheck: (options.Healthcheck ?? own.Healthcheck) as { Test?: string[] } | undefined,
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
      inspect: () => this.answer(() => containerInspect(found())),
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
      rename: (options: { name: string }) =>
        this.answer(() => {
          const container = found();
          if ([...this.containers.values()].some((c) => c.name === options.name))
            throw engineRefusal(409, `Conflict. The container name "/${options.name}" is already in use`);
          container.name = options.name;
          this.emitContainer(container, 'rename');
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
        this.answer(() => (options.follow ? this.followLogs(found()) : containerLogs(found(), options))),
      stats: (options?: { stream?: boolean }) => this.answer(() => containerStats(found(), options?.stream !== false)),
      getArchive: (options: { path: string }) => this.answer(() => folderArchive(found(), options.path, (volume) => this.volumes.get(volume)?.files)),
      putArchive: (tar: NodeJS.ReadableStream, options: { path: string }) =>
        this.answer(() => unpackArchive(found(), tar, options.path, (volume) => this.addVolume(volume).files)),
    };
  }

  /** A following log request: the stream the lines a container writes from now on go to. */
  private followLogs(container: FakeContainer): Readable {
    const stream = new PassThrough();
    const set = this.logFollowers.get(container.id) ?? new Set();
    set.add(stream);
    this.logFollowers.set(container.id, set);
    stream.on('close', () => set.delete(stream));
    return stream;
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
    return { Id: image.id, RepoTags: image.tags, RepoDigests: [], Size: image.sizeBytes ?? 0, Config: image.config ?? {} };
  }

  private listImages(options: { filters?: unknown } | undefined) {
    const filters = filtersOf(options);
    return this.images
      .filter((image) => matchesLabels((image.config?.Labels ?? {}) as Labels, filters.label))
      .filter((image) => !filters.dangling || filters.dangling.includes(String(image.tags.length === 0)))
      .filter((image) => !filters.reference || image.tags.some((tag) => filters.reference?.some((wanted) => tag === wanted || tag.startsWith(`${wanted}:`))))
      .map((image) => ({
        Id: image.id,
        RepoTags: image.tags,
        RepoDigests: [],
        Created: image.createdUnixS ?? 1_700_000_000,
        Size: image.sizeBytes ?? 0,
        Labels: { ...((image.config?.Labels ?? {}) as Labels) },
      }));
  }

  /** A pull: the registry's image lands here under the reference, which leaves any image it named before. */
  private pull(reference: string, auth: Record<string, unknown> | undefined) {
    const fetched = this.registry.fetch(reference, auth);
    const had = this.images.find((image) => image.id === fetched.id);
    for (const image of this.images) image.tags = image.tags.filter((tag) => tag !== reference);
    if (had) had.tags.push(reference);
    else this.images.push({ ...fetched, tags: [reference] });
    return pullStream(reference, !had);
  }

  /** The engine's prune: images no container uses, untagged ones unless told `dangling=false`, with a label when asked. */
  private pruneImages(options: { filters?: unknown } | undefined) {
    const filters = filtersOf(options);
    const used = new Set([...this.containers.values()].map((container) => container.imageId));
    const gone = this.images
      .filter((image) => !used.has(image.id))
      .filter((image) => filters.dangling?.includes('false') || image.tags.length === 0)
      .filter((image) => matchesLabels((image.config?.Labels ?? {}) as Labels, filters.label));
    for (const image of gone) this.images.splice(this.images.indexOf(image), 1);
    return {
      ImagesDeleted: gone.flatMap((image) => [...image.tags.map((tag) => ({ Untagged: tag })), { Deleted: image.id }, { Deleted: `sha256:${'0'.repeat(64)}` }]),
      SpaceReclaimed: gone.reduce((sum, image) => sum + (image.sizeBytes ?? 0), 0),
    };
  }

  private listNetworks(options: { filters?: unknown } | undefined) {
    const filters = filtersOf(options);
    return [...this.networks.values()].filter((n) => matchesLabels(n.labels, filters.label)).map((n) => ({ Id: n.id, Name: n.name, Labels: { ...n.labels } }));
  }

  private networkHandle(id: string) {
    const found = () => {
      const network = this.networks.get(id) ?? [...this.networks.values()].find((n) => n.name === id);
      if (!network) throw engineRefusal(404, `network ${id} not found`);
      return network;
    };
    return {
      id,
      connect: () => this.answer(() => void found()),
      remove: () => this.answer(() => void this.networks.delete(found().id)),
    };
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
        if (archive) return fileArchive(this.container(archive[1] as string), query.path ?? '', options.method === 'HEAD');
        if (this.swarm) return this.swarm.answer(options.method, path, query, options.options?._body, this);
        if (path === '/info') return { Name: this.hostname, Swarm: { LocalNodeState: 'inactive', ControlAvailable: false } };
        throw engineRefusal(404, 'page not found');
      }).then(
        (data) => callback(null, data),
        (error: unknown) => callback(error),
      );
    });
  }
}

/** What a caller asks of the modem (docker-modem's dial options, the parts the collectors set). */
interface DialOptions {
  path: string;
  method: string;
  options?: { _query?: Record<string, unknown>; _body?: unknown };
  isStream?: boolean;
}

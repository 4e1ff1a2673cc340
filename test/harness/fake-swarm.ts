import { randomBytes } from 'node:crypto';
import { engineRefusal } from './engine-refusal.ts';
import type { FakeEngine } from './fake-engine.ts';

// biome-ignore lint/suspicious/noExplicitAny: the engine's swarm objects, shaped as its API writes them
type EngineJson = any;

const id = () => randomBytes(13).toString('hex').slice(0, 25);

/**
 * A swarm as one node's engine serves it, for the fake engine: nodes, services
 * with their tasks, networks, configs and secrets, kept as the engine's JSON.
 * A manager answers the swarm endpoints (updates only at the version they read,
 * as Swarm's optimistic concurrency wants); a worker refuses them with 503, as
 * a node that is not a manager does. An update takes effect at once: the new
 * spec's tasks are running when the next read comes.
 */
export class FakeSwarm {
  readonly clusterId = id();
  readonly nodes: EngineJson[] = [];
  readonly services: EngineJson[] = [];
  readonly tasks: EngineJson[] = [];
  readonly networks: EngineJson[] = [];
  readonly configs: EngineJson[] = [];
  readonly secrets: EngineJson[] = [];
  readonly localNode: EngineJson;

  constructor(hostname: string, role: 'manager' | 'worker' = 'manager') {
    this.localNode = this.addNode(hostname, { role, leader: role === 'manager' });
    this.networks.push({ Id: id(), Name: 'ingress', Driver: 'overlay', Scope: 'swarm', Ingress: true, Labels: {} });
  }

  addNode(hostname: string, spec: { role?: 'manager' | 'worker'; state?: 'ready' | 'down'; availability?: string; leader?: boolean } = {}): EngineJson {
    const role = spec.role ?? 'worker';
    const node = {
      ID: id(),
      Version: { Index: 10 },
      UpdatedAt: new Date().toISOString(),
      Spec: { Role: role, Availability: spec.availability ?? 'active', Labels: {} },
      Description: {
        Hostname: hostname,
        Platform: { OS: 'linux', Architecture: 'x86_64' },
        Resources: { NanoCPUs: 2e9, MemoryBytes: 4 * 1024 ** 3 },
        Engine: { EngineVersion: '27.0.0', Labels: {} },
      },
      Status: { State: spec.state ?? 'ready', Addr: '10.0.0.1' },
      ...(role === 'manager' ? { ManagerStatus: { Leader: spec.leader === true, Reachability: 'reachable' } } : {}),
    };
    this.nodes.push(node);
    return node;
  }

  /** A replicated service and its tasks on the local node, `running` of them running (all by default), the rest failed. */
  addService(name: string, spec: { image?: string; replicas?: number; running?: number; labels?: Record<string, string> } = {}): EngineJson {
    const replicas = spec.replicas ?? 1;
    const service = {
      ID: id(),
      Version: { Index: 20 },
      CreatedAt: new Date().toISOString(),
      UpdatedAt: new Date().toISOString(),
      Spec: {
        Name: name,
        Labels: spec.labels ?? {},
        Mode: { Replicated: { Replicas: replicas } },
        TaskTemplate: { ContainerSpec: { Image: spec.image ?? 'busybox:1', Env: ['SECRET_TOKEN=hunter2'] }, Networks: [] },
        EndpointSpec: { Ports: [] },
      },
    };
    this.services.push(service);
    this.placeTasks(service, spec.running ?? replicas);
    return service;
  }

  /** A secret: the engine never gives its data back, so the fake keeps none. */
  addSecret(name: string): EngineJson {
    const secret = {
      ID: id(),
      Version: { Index: 30 },
      CreatedAt: new Date().toISOString(),
      UpdatedAt: new Date().toISOString(),
      Spec: { Name: name, Labels: {} },
    };
    this.secrets.push(secret);
    return secret;
  }

  /** The service's tasks for its current spec: `running` running, the rest of its replicas failed. */
  private placeTasks(service: EngineJson, running: number): void {
    for (const task of this.tasks.filter((t) => t.ServiceID === service.ID)) task.DesiredState = 'shutdown';
    const replicas = service.Spec.Mode.Replicated?.Replicas ?? 1;
    for (let slot = 1; slot <= replicas; slot++) {
      const up = slot <= running;
      this.tasks.push({
        ID: id(),
        ServiceID: service.ID,
        Slot: slot,
        NodeID: this.localNode.ID,
        DesiredState: 'running',
        CreatedAt: new Date().toISOString(),
        Version: { Index: service.Version.Index },
        Spec: { ContainerSpec: { Image: service.Spec.TaskTemplate.ContainerSpec.Image } },
        Status: {
          State: up ? 'running' : 'failed',
          Message: up ? 'started' : 'failed',
          ...(up ? {} : { Err: 'task: non-zero exit (1)' }),
          Timestamp: new Date().toISOString(),
          ContainerStatus: { ContainerID: randomBytes(32).toString('hex'), ExitCode: up ? 0 : 1 },
        },
      });
    }
  }

  private info(engine: FakeEngine): EngineJson {
    const manager = this.localNode.Spec.Role === 'manager';
    return {
      Name: engine.hostname,
      Swarm: { LocalNodeState: 'active', ControlAvailable: manager, NodeID: this.localNode.ID, Cluster: { ID: this.clusterId } },
    };
  }

  private find(list: EngineJson[], wanted: string, what: string): EngineJson {
    const found = list.find((item) => (item.ID ?? item.Id) === wanted);
    if (!found) throw engineRefusal(404, `${what} ${wanted} not found`);
    return found;
  }

  private atVersion(item: EngineJson, version: string | undefined): void {
    if (Number(version) !== item.Version.Index) throw engineRefusal(500, 'rpc error: code = Unknown desc = update out of sequence');
  }

  /** One request to a swarm endpoint, as the engine answers it. */
  answer(method: string, path: string, query: Record<string, string>, body: EngineJson, engine: FakeEngine): EngineJson {
    if (path === '/info') return this.info(engine);
    if (this.localNode.Spec.Role !== 'manager') {
      throw engineRefusal(503, "This node is not a swarm manager. Worker nodes can't be used to view or modify cluster state.");
    }
    const [, kind, itemId, verb] = path.split('/') as [string, string, string | undefined, string | undefined];
    if (method === 'GET' && kind === 'volumes' && itemId === undefined) return engine.client.listVolumes();
    const lists: Record<string, EngineJson[]> = {
      services: this.services,
      tasks: this.tasks,
      nodes: this.nodes,
      networks: this.networks,
      configs: this.configs,
      secrets: this.secrets,
    };
    const list = lists[kind];
    if (!list) throw engineRefusal(404, 'page not found');
    if (method === 'GET' && itemId === undefined) {
      if (kind !== 'services' || query.status !== 'true') return list;
      return this.services.map((s) => {
        const tasks = this.tasks.filter((t) => t.ServiceID === s.ID && t.DesiredState === 'running');
        return { ...s, ServiceStatus: { DesiredTasks: tasks.length, RunningTasks: tasks.filter((t) => t.Status.State === 'running').length } };
      });
    }
    if (method === 'GET' && itemId !== undefined) return this.find(list, itemId, kind.slice(0, -1));
    if (method === 'POST' && itemId === 'create' && (kind === 'secrets' || kind === 'configs')) {
      if (list.some((item) => item.Spec.Name === body.Name))
        throw engineRefusal(409, `rpc error: code = AlreadyExists desc = ${kind.slice(0, -1)} ${body.Name} already exists`);
      const item = {
        ID: id(),
        Version: { Index: 1 },
        CreatedAt: new Date().toISOString(),
        UpdatedAt: new Date().toISOString(),
        Spec: { Name: body.Name, Labels: body.Labels ?? {} },
      };
      list.push(item);
      return { ID: item.ID };
    }
    if (method === 'POST' && itemId !== undefined && verb === 'update') {
      const item = this.find(list, itemId, kind.slice(0, -1));
      this.atVersion(item, query.version);
      if (kind === 'services') item.PreviousSpec = item.Spec;
      item.Spec = structuredClone(body);
      item.Version = { Index: item.Version.Index + 1 };
      item.UpdatedAt = new Date().toISOString();
      if (kind === 'services') this.placeTasks(item, item.Spec.Mode.Replicated?.Replicas ?? 1);
      return {};
    }
    if (method === 'DELETE' && itemId !== undefined) {
      const item = this.find(list, itemId, kind.slice(0, -1));
      list.splice(list.indexOf(item), 1);
      return {};
    }
    throw engineRefusal(404, 'page not found');
  }
}

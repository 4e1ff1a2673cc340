/**
 * Compact records of what a Docker engine holds (containers, volumes, and a
 * manager's swarm: services, tasks, nodes, networks, configs, secrets). Built
 * agent-side from the engine's API (never the raw objects, which are large and
 * carry environment values) and shared by every domain that reads an engine:
 * the docker and sandbox collectors and the docker domain's inventory, the
 * swarm collector and its snapshot, and the broker's index (find, describe,
 * metrics, recommendations). No one domain owns them, so they live here.
 */

export type ServiceMode = 'replicated' | 'global' | 'replicated-job' | 'global-job';

export interface ServiceRecord {
  id: string;
  name: string;
  version: number;
  created_unix_ms: number;
  updated_unix_ms: number;
  image: string;
  mode: ServiceMode;
  replicas: number | null;
  labels: Record<string, string>;
  stack: string | null;
  env_names: string[];
  command: string[];
  args: string[];
  ports: { target: number; published: number | null; protocol: string; mode: string }[];
  networks: string[];
  secrets: { id: string; name: string; target: string }[];
  configs: { id: string; name: string; target: string }[];
  mounts: { type: string; source: string; target: string; read_only: boolean; has_options: boolean }[];
  constraints: string[];
  preferences: string[];
  max_replicas: number | null;
  resources: {
    cpu_limit_cores: number | null;
    memory_limit_bytes: number | null;
    cpu_reservation_cores: number | null;
    memory_reservation_bytes: number | null;
  };
  healthcheck: { test: string[]; interval: string | null; timeout: string | null; start_period: string | null; retries: number | null } | null;
  restart_policy: { condition: string; delay: string | null; max_attempts: number | null; window: string | null } | null;
  update_status: { state: string; message: string; started_unix_ms: number | null; completed_unix_ms: number | null } | null;
  log_driver: { name: string; option_names: string[] } | null;
  has_previous_spec: boolean;
  /** From the engine's service status: what it wants running now (for global services: one per eligible node). */
  desired_tasks: number | null;
  running_tasks: number | null;
}

export interface TaskRecord {
  id: string;
  service_id: string;
  service_name: string;
  /** `service.slot` (replicated) or `service.nodeid` (global), as docker prints it. */
  name: string;
  slot: number | null;
  node_id: string;
  state: string;
  desired_state: string;
  message: string;
  error: string;
  exit_code: number | null;
  timestamp_unix_ms: number;
  created_unix_ms: number;
  container_id: string | null;
  image: string;
  /** The spec version the task was created for, when the engine says. */
  service_version: number | null;
}

export interface NodeRecord {
  id: string;
  hostname: string;
  role: 'manager' | 'worker';
  availability: string;
  state: string;
  addr: string;
  leader: boolean;
  reachability: string | null;
  labels: Record<string, string>;
  engine_labels: Record<string, string>;
  cpu_cores: number;
  memory_bytes: number;
  engine_version: string;
  os: string;
  arch: string;
  version: number;
  updated_unix_ms: number;
}

export interface NetworkRecord {
  id: string;
  name: string;
  driver: string;
  scope: string;
  attachable: boolean;
  ingress: boolean;
  labels: Record<string, string>;
  stack: string | null;
}

export interface PayloadRecord {
  id: string;
  name: string;
  labels: Record<string, string>;
  created_unix_ms: number;
  updated_unix_ms: number;
  stack: string | null;
  /** Configs only: a secret's payload is never read, not even its length. */
  size_bytes: number | null;
}

export interface VolumeRecord {
  name: string;
  driver: string;
  scope: string;
  labels: Record<string, string>;
  stack: string | null;
  has_options: boolean;
}

/** A manager's whole view of its swarm. */
export interface SwarmSnapshot {
  cluster_id: string;
  cluster_name: string;
  manager_node_id: string;
  taken_unix_ms: number;
  services: ServiceRecord[];
  tasks: TaskRecord[];
  nodes: NodeRecord[];
  networks: NetworkRecord[];
  configs: PayloadRecord[];
  secrets: PayloadRecord[];
  /** Volumes of the manager node itself (volumes are local to each engine). */
  volumes: VolumeRecord[];
}

export interface ContainerRecord {
  id: string;
  name: string;
  image: string;
  state: string;
  status: string;
  created_unix_ms: number;
  /** The engine's count of restarts by the container's restart policy (docker_list's restart_count); agents before 0.9 leave it out. */
  restart_count?: number;
  labels: Record<string, string>;
  service_name: string | null;
  task_id: string | null;
  task_name: string | null;
  stack: string | null;
  /** The sandbox id, when the container carries the agent's sandbox label. */
  sandbox_id: string | null;
}

/** How often an agent with Docker sends its whole inventory, beside the one it sends after each change. */
export const INVENTORY_INTERVAL_MS = 30_000;

/** An agent's containers (and local volumes and networks), for the broker's index. */
export interface ContainerInventory {
  taken_unix_ms: number;
  containers: ContainerRecord[];
  volumes: VolumeRecord[];
  /** The engine's networks of scope local (a swarm's own are in its snapshot); absent from an agent older than them. */
  networks?: NetworkRecord[];
}

export const STACK_LABEL = 'com.docker.stack.namespace';

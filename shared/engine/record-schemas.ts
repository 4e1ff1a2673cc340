import { z } from 'zod';
import type {
  ContainerInventory,
  ContainerRecord,
  NetworkRecord,
  NodeRecord,
  PayloadRecord,
  ServiceRecord,
  SwarmSnapshot,
  TaskRecord,
  VolumeRecord,
} from './records.ts';

/**
 * The schemas of the two pictures of an engine that agents report: a host's
 * containers and volumes (the docker domain declares it as its inventory
 * report) and a manager's whole swarm (the swarm domain's snapshot report).
 * The broker checks every report against them before indexing it: what an
 * agent sends is a claim, and a malformed one must never reach the index.
 */
const labels = z.record(z.string(), z.string());
const id = z.string().max(256);
const text = z.string().max(65_536);
const stack = z.string().max(256).nullable();
const num = z.number();
const numOrNull = z.number().nullable();
const strOrNull = z.string().max(4096).nullable();

const serviceRecord = z.object({
  id: id.min(1),
  name: id.min(1),
  version: num,
  created_unix_ms: num,
  updated_unix_ms: num,
  image: text,
  mode: z.enum(['replicated', 'global', 'replicated-job', 'global-job']),
  replicas: numOrNull,
  labels,
  stack,
  env_names: z.array(z.string()),
  command: z.array(z.string()),
  args: z.array(z.string()),
  ports: z.array(z.object({ target: num, published: numOrNull, protocol: z.string(), mode: z.string() })),
  networks: z.array(z.string()),
  secrets: z.array(z.object({ id: z.string(), name: z.string(), target: z.string() })),
  configs: z.array(z.object({ id: z.string(), name: z.string(), target: z.string() })),
  mounts: z.array(z.object({ type: z.string(), source: z.string(), target: z.string(), read_only: z.boolean(), has_options: z.boolean() })),
  constraints: z.array(z.string()),
  preferences: z.array(z.string()),
  max_replicas: numOrNull,
  resources: z.object({
    cpu_limit_cores: numOrNull,
    memory_limit_bytes: numOrNull,
    cpu_reservation_cores: numOrNull,
    memory_reservation_bytes: numOrNull,
  }),
  healthcheck: z.object({ test: z.array(z.string()), interval: strOrNull, timeout: strOrNull, start_period: strOrNull, retries: numOrNull }).nullable(),
  restart_policy: z.object({ condition: z.string(), delay: strOrNull, max_attempts: numOrNull, window: strOrNull }).nullable(),
  update_status: z.object({ state: z.string(), message: text, started_unix_ms: numOrNull, completed_unix_ms: numOrNull }).nullable(),
  log_driver: z.object({ name: z.string(), option_names: z.array(z.string()) }).nullable(),
  has_previous_spec: z.boolean(),
  desired_tasks: numOrNull,
  running_tasks: numOrNull,
}) satisfies z.ZodType<ServiceRecord>;

const taskRecord = z.object({
  id: id.min(1),
  service_id: id,
  service_name: id,
  name: id,
  slot: numOrNull,
  node_id: id,
  state: z.string(),
  desired_state: z.string(),
  message: text,
  error: text,
  exit_code: numOrNull,
  timestamp_unix_ms: num,
  created_unix_ms: num,
  container_id: z.string().nullable(),
  image: text,
  service_version: numOrNull,
}) satisfies z.ZodType<TaskRecord>;

const nodeRecord = z.object({
  id: id.min(1),
  hostname: id,
  role: z.enum(['manager', 'worker']),
  availability: z.string(),
  state: z.string(),
  addr: z.string(),
  leader: z.boolean(),
  reachability: z.string().nullable(),
  labels,
  engine_labels: labels,
  cpu_cores: num,
  memory_bytes: num,
  engine_version: z.string(),
  os: z.string(),
  arch: z.string(),
  version: num,
  updated_unix_ms: num,
}) satisfies z.ZodType<NodeRecord>;

const networkRecord = z.object({
  id: id.min(1),
  name: id,
  driver: z.string(),
  scope: z.string(),
  attachable: z.boolean(),
  ingress: z.boolean(),
  labels,
  stack,
}) satisfies z.ZodType<NetworkRecord>;

const payloadRecord = z.object({
  id: id.min(1),
  name: id,
  labels,
  created_unix_ms: num,
  updated_unix_ms: num,
  stack,
  size_bytes: numOrNull,
}) satisfies z.ZodType<PayloadRecord>;

const volumeRecord = z.object({
  name: id.min(1),
  driver: z.string(),
  scope: z.string(),
  labels,
  stack,
  has_options: z.boolean(),
}) satisfies z.ZodType<VolumeRecord>;

export const swarmSnapshotSchema = z.object({
  cluster_id: id.min(1),
  cluster_name: id,
  manager_node_id: id,
  taken_unix_ms: num,
  services: z.array(serviceRecord),
  tasks: z.array(taskRecord),
  nodes: z.array(nodeRecord),
  networks: z.array(networkRecord),
  configs: z.array(payloadRecord),
  secrets: z.array(payloadRecord),
  volumes: z.array(volumeRecord),
}) satisfies z.ZodType<SwarmSnapshot>;

const containerRecord = z.object({
  id: id.min(1),
  name: id,
  image: text,
  state: z.string(),
  status: z.string(),
  created_unix_ms: num,
  restart_count: num.optional(),
  labels,
  service_name: z.string().nullable(),
  task_id: z.string().nullable(),
  task_name: z.string().nullable(),
  stack,
  sandbox_id: z.string().nullable(),
}) satisfies z.ZodType<ContainerRecord>;

export const containerInventorySchema = z.object({
  taken_unix_ms: num,
  containers: z.array(containerRecord),
  volumes: z.array(volumeRecord),
  networks: z.array(networkRecord).optional(),
}) satisfies z.ZodType<ContainerInventory>;

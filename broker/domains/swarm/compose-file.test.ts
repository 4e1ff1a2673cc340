import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ServiceRecord, SwarmSnapshot } from '../../../shared/engine/records.ts';
import { composeFile } from './compose-file.ts';

const service = (name: string, stack: string | null, extra: Partial<ServiceRecord> = {}): ServiceRecord => ({
  id: `id-${name}`,
  name,
  version: 1,
  created_unix_ms: 0,
  updated_unix_ms: 0,
  image: 'nginx:1.27',
  mode: 'replicated',
  replicas: 2,
  labels: { 'com.docker.stack.namespace': stack ?? '', team: 'web' },
  stack,
  env_names: ['DB_PASSWORD', 'A_SETTING'],
  command: [],
  args: ['--port', '80'],
  ports: [{ target: 80, published: 8080, protocol: 'tcp', mode: 'ingress' }],
  networks: ['net1'],
  secrets: [{ id: 's1', name: 'db_password', target: 'db_password' }],
  configs: [],
  mounts: [{ type: 'volume', source: 'data', target: '/data', read_only: false, has_options: false }],
  constraints: ['node.role==worker'],
  preferences: [],
  max_replicas: null,
  resources: { cpu_limit_cores: 0.5, memory_limit_bytes: 268435456, cpu_reservation_cores: null, memory_reservation_bytes: null },
  healthcheck: null,
  restart_policy: null,
  update_status: null,
  log_driver: null,
  has_previous_spec: false,
  desired_tasks: 2,
  running_tasks: 2,
  ...extra,
});

const snapshot = { networks: [{ id: 'net1', name: 'shop_default' }] } as unknown as SwarmSnapshot;

describe('a service or stack as a Compose file', () => {
  it('names environment variables without values and declares what it uses as external', () => {
    const text = composeFile([service('shop_web', 'shop'), service('shop_worker', 'shop', { ports: [], replicas: 1 })], snapshot);
    const compose = parse(text);
    expect(Object.keys(compose.services)).toEqual(['web', 'worker']);
    expect(compose.services.web).toMatchObject({
      image: 'nginx:1.27',
      command: ['--port', '80'],
      environment: ['A_SETTING', 'DB_PASSWORD'],
      ports: [{ target: 80, published: 8080, protocol: 'tcp', mode: 'ingress' }],
      networks: ['shop_default'],
      secrets: [{ source: 'db_password', target: 'db_password' }],
      deploy: { mode: 'replicated', replicas: 2, labels: { team: 'web' }, resources: { limits: { cpus: '0.5', memory: '268435456b' } } },
    });
    expect(compose.networks).toEqual({ shop_default: { external: true } });
    expect(compose.secrets).toEqual({ db_password: { external: true } });
    expect(compose.volumes).toEqual({ data: { external: true } });
    expect(text).not.toContain('com.docker.stack.namespace');
  });
});

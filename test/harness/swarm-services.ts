import type Docker from 'dockerode';
import { inject } from 'vitest';

export interface ServiceSpec {
  name: string;
  command: string[];
  replicas?: number;
  labels?: Record<string, string>;
  constraints?: string[];
  restart?: { Condition: string; Delay?: number; MaxAttempts?: number };
  networks?: string[];
  image?: string;
}

/** Creates a swarm service on the test engine (busybox image unless told otherwise); returns its id. */
export async function createService(docker: Docker, spec: ServiceSpec): Promise<string> {
  const created = (await docker.createService({
    Name: spec.name,
    Labels: spec.labels ?? {},
    TaskTemplate: {
      // busybox sh ignores SIGTERM: a short grace period keeps rollouts from waiting 10 s per task.
      ContainerSpec: { Image: spec.image ?? inject('testImage'), Command: spec.command, StopGracePeriod: 1_000_000_000 },
      ...(spec.constraints ? { Placement: { Constraints: spec.constraints } } : {}),
      ...(spec.restart ? { RestartPolicy: spec.restart } : {}),
      ...(spec.networks ? { Networks: spec.networks.map((target) => ({ Target: target })) } : {}),
    },
    Mode: { Replicated: { Replicas: spec.replicas ?? 1 } },
    // Fast rollouts: all tasks at once, watched for half a second (the default watches each for 5 s). A task that
    // fails in that half second (a busy shared engine) is restarted, not a reason to pause the whole rollout, which
    // would then never converge.
    UpdateConfig: { Parallelism: 0, Monitor: 500_000_000, Order: 'stop-first', FailureAction: 'continue' },
    RollbackConfig: { Parallelism: 0, Monitor: 500_000_000, Order: 'stop-first', FailureAction: 'continue' },
  })) as { id?: string; ID?: string };
  return created.id ?? created.ID ?? '';
}

/** Removes services, secrets, configs, networks and volumes by name, whatever exists. */
export async function removeSwarmObjects(
  docker: Docker,
  names: { services?: string[]; secrets?: string[]; configs?: string[]; networks?: string[]; volumes?: string[] },
): Promise<void> {
  await Promise.all(
    (names.services ?? []).map((n) =>
      docker
        .getService(n)
        .remove()
        .catch(() => undefined),
    ),
  );
  // Services go first: secrets and configs in use cannot be removed.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const secrets = (await docker.listSecrets()) as { ID: string; Spec: { Name: string } }[];
  const configs = (await docker.listConfigs()) as { ID: string; Spec: { Name: string } }[];
  await Promise.all(
    secrets
      .filter((s) => names.secrets?.includes(s.Spec.Name))
      .map((s) =>
        docker
          .getSecret(s.ID)
          .remove()
          .catch(() => undefined),
      ),
  );
  await Promise.all(
    configs
      .filter((c) => names.configs?.includes(c.Spec.Name))
      .map((c) =>
        docker
          .getConfig(c.ID)
          .remove()
          .catch(() => undefined),
      ),
  );
  await Promise.all(
    (names.networks ?? []).map((n) =>
      docker
        .getNetwork(n)
        .remove()
        .catch(() => undefined),
    ),
  );
  await Promise.all(
    (names.volumes ?? []).map((n) =>
      docker
        .getVolume(n)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
}

import type { dockerInspect } from '../../../shared/domains/docker/docker-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { unixMs } from '../../engine/engine-time.ts';
import type { DockerEngine } from './docker-engine.ts';

/** docker_inspect: one container's digest, environment variables named without their values. */
export function registerDockerInspect(dispatcher: Dispatcher, engine: DockerEngine): void {
  dispatcher.register<typeof dockerInspect>('docker.inspect', (params) =>
    engine.run(async () => {
      await engine.changes.settled((await engine.directory.resolve(params.name)).Id);
      const info = await engine.directory.inspect(params.name);
      const exposed = info.NetworkSettings.Ports ?? {};
      const portRows = Object.entries(exposed).flatMap(([spec, bindings]) => {
        const [port, protocol] = spec.split('/') as [string, string];
        const list = bindings?.length ? bindings : [null];
        return list.map((binding) => ({
          private_port: Number(port),
          public_port: binding?.HostPort ? Number(binding.HostPort) : null,
          protocol: protocol ?? 'tcp',
          ip: binding?.HostIp || null,
        }));
      });
      return {
        payload: {
          id: info.Id.slice(0, 12),
          name: info.Name.replace(/^\//, ''),
          image: info.Config.Image,
          image_id: info.Image,
          created_unix_ms: unixMs(info.Created) ?? 0,
          state: {
            status: info.State.Status,
            running: info.State.Running,
            exit_code: info.State.ExitCode,
            oom_killed: info.State.OOMKilled,
            started_at_unix_ms: unixMs(info.State.StartedAt),
            finished_at_unix_ms: unixMs(info.State.FinishedAt),
            restart_count: info.RestartCount,
            error: info.State.Error ?? '',
          },
          health: info.State.Health
            ? {
                status: info.State.Health.Status,
                failing_streak: info.State.Health.FailingStreak,
                last_output: info.State.Health.Log?.at(-1)?.Output?.slice(0, 2000) ?? null,
              }
            : null,
          restart_policy: { name: info.HostConfig.RestartPolicy?.Name || 'no', maximum_retry_count: info.HostConfig.RestartPolicy?.MaximumRetryCount ?? 0 },
          ports: portRows,
          mounts: info.Mounts.map((m) => ({ type: m.Type ?? 'bind', source: m.Source, destination: m.Destination, mode: m.Mode, rw: m.RW })),
          networks: Object.entries(info.NetworkSettings.Networks ?? {}).map(([name, n]) => ({ name, ip_address: n.IPAddress, gateway: n.Gateway })),
          command: [info.Path, ...info.Args].filter((part) => part !== ''),
          entrypoint: Array.isArray(info.Config.Entrypoint) ? info.Config.Entrypoint : info.Config.Entrypoint ? [info.Config.Entrypoint] : [],
          labels: info.Config.Labels ?? {},
          env_names: (info.Config.Env ?? []).map((entry) => entry.slice(0, entry.indexOf('=') >= 0 ? entry.indexOf('=') : entry.length)).sort(),
        },
      };
    }),
  );
}

import type { Readable } from 'node:stream';
import type { dockerLogs } from '../../../shared/domains/docker/docker-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { containerName } from '../../engine/container-directory.ts';
import { toUnixSeconds } from '../../engine/engine-time.ts';
import { LogDemultiplexer, splitTimestamp } from '../../engine/log-demultiplexer.ts';
import type { DockerEngine } from './docker-engine.ts';
import { LineCollector } from './line-collector.ts';

/** docker_logs: a container's logs, stdout and stderr told apart, optionally followed for a while. */
export function registerDockerLogs(dispatcher: Dispatcher, engine: DockerEngine): void {
  dispatcher.register<typeof dockerLogs>('docker.logs', (params, context) =>
    engine.run(async () => {
      const container = await engine.directory.resolve(params.name);
      const info = await engine.directory.refresh(container.Id);
      const multiplexed = !(info?.Config.Tty ?? false);
      const maxLines = params.lines ?? 50;
      const collector = new LineCollector({ timestamps: params.timestamps ?? false, contains: params.contains, stream: params.stream ?? 'both', maxLines });
      const demux = new LogDemultiplexer(multiplexed);
      const since = params.since === undefined ? undefined : Math.floor(toUnixSeconds(params.since, 'since'));
      const until = params.until === undefined ? undefined : Math.ceil(toUnixSeconds(params.until, 'until'));
      const handle = engine.docker.getContainer(container.Id);
      const raw = (await handle.logs({
        follow: false,
        stdout: params.stream !== 'stderr',
        stderr: params.stream !== 'stdout',
        timestamps: true,
        // With a text filter, read the most the tool allows and keep the last matches.
        tail: params.contains ? 5000 : maxLines,
        ...(since !== undefined ? { since } : {}),
        ...(until !== undefined ? { until } : {}),
      })) as unknown as Buffer;
      // The follow below starts at a whole second, so it reads again the tail's lines of that second: the seam remembers them.
      const seam = new Set<string>();
      let seamStamp = '';
      for (const line of [...demux.push(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw))), ...demux.flush()]) {
        collector.add(line.stream, line.raw);
        const stamp = splitTimestamp(line.raw).timestamp ?? '';
        if (stamp > seamStamp) seam.clear();
        if (stamp >= seamStamp) {
          seamStamp = stamp;
          seam.add(`${line.stream} ${line.raw}`);
        }
      }
      const followMs = params.follow_ms ?? 0;
      if (followMs > 0 && until === undefined) {
        const stream = (await handle.logs({
          follow: true,
          stdout: params.stream !== 'stderr',
          stderr: params.stream !== 'stdout',
          timestamps: true,
          since: Math.floor(Date.now() / 1000),
        })) as unknown as Readable;
        const live = new LogDemultiplexer(multiplexed);
        await new Promise<void>((resolve) => {
          const finish = () => {
            clearTimeout(timer);
            context.signal.removeEventListener('abort', finish);
            stream.destroy();
            resolve();
          };
          const timer = setTimeout(finish, Math.min(followMs, Math.max(0, context.deadlineUnixMs - Date.now() - 250)));
          context.signal.addEventListener('abort', finish, { once: true });
          stream.on('data', (chunk: Buffer) => {
            const fresh = live
              .push(chunk)
              .filter((line) => {
                const stamp = splitTimestamp(line.raw).timestamp ?? '';
                // Docker's timestamps have a fixed width, so they compare as text.
                return stamp === '' || stamp > seamStamp || (stamp === seamStamp && !seam.has(`${line.stream} ${line.raw}`));
              })
              .flatMap((line) => collector.add(line.stream, line.raw) ?? []);
            if (fresh.length) context.emit({ container: containerName(container), lines: fresh });
          });
          stream.on('end', finish);
          stream.on('error', finish);
        });
      }
      return {
        payload: {
          container: containerName(container),
          lines: collector.lines,
          count: collector.lines.length,
          truncated: collector.truncatedReason !== undefined,
          ...(collector.truncatedReason ? { truncated_reason: collector.truncatedReason } : {}),
        },
      };
    }),
  );
}

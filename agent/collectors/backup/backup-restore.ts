import type { VolumeInspectInfo } from 'dockerode';
import type { backupRestore } from '../../../shared/domains/backup/backup-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { dockerStatus } from '../../engine/engine-errors.ts';
import { restoreArchive } from './archive-restore.ts';
import { type BackupApi, type BackupEngine, workSignal } from './backup-engine.ts';
import { checksumMatches } from './backup-store.ts';

/** A local volume created with `o=bind` (or a device path) is a host directory in disguise. */
function bindsHost(volume: VolumeInspectInfo): boolean {
  const options = volume.Options ?? {};
  return /(^|,)r?bind(,|$)/.test(options.o ?? '') || (options.device ?? '').startsWith('/');
}

async function inspectVolume(docker: BackupApi, name: string): Promise<VolumeInspectInfo | undefined> {
  try {
    return await docker.getVolume(name).inspect();
  } catch (error) {
    if (dockerStatus(error) === 404) return undefined;
    throw error;
  }
}

/**
 * backup_restore: every volume is checked before any is touched. A volume a
 * running container uses is refused (conflict), and so is one that binds a host
 * directory; a volume that is gone is created again with the archive's content.
 */
export function registerBackupRestore(dispatcher: Dispatcher, backup: BackupEngine): void {
  const docker = backup.engine.docker;
  dispatcher.register<typeof backupRestore>('backup.restore', (params, context) =>
    backup.engine.run(async () => {
      const startedUnixMs = Date.now();
      const { manifest, path } = await backup.store.find(params.archive);
      if (!(await checksumMatches(path, manifest.sha256))) {
        throw new FleetError('conflict', `archive "${params.archive}" does not match its recorded SHA-256: it was changed or damaged`, {
          hint: 'Nothing was restored. Pick another archive from backup_list.',
        });
      }
      const created: string[] = [];
      for (const volume of manifest.volumes) {
        const info = await inspectVolume(docker, volume.name);
        if (!info) {
          created.push(volume.name);
          continue;
        }
        if (bindsHost(info)) {
          throw new FleetError('invalid_argument', `volume "${volume.name}" binds a host directory (${info.Options?.device ?? 'o=bind'}); it is not restored`, {
            hint: 'Restore host directories on the host itself. Nothing was restored.',
          });
        }
        const users = await docker.listContainers({ filters: { volume: [volume.name], status: ['running', 'restarting', 'paused'] } });
        if (users.length > 0) {
          const names = users.map((user) => (user.Names[0] ?? user.Id).replace(/^\//, ''));
          throw new FleetError(
            'conflict',
            `volume "${volume.name}" is in use by running ${names.join(', ')}; a running container's volume is never overwritten`,
            {
              hint: `Stop ${names.join(', ')} (docker_stop), then restore. Nothing was restored.`,
            },
          );
        }
      }
      for (const name of created) await docker.createVolume({ Name: name, Labels: { 'fleetmesh.restored-from': manifest.archive } });
      context.emit({ phase: 'restoring', volumes: manifest.volumes.length });
      await restoreArchive(docker, backup.owner, manifest, path, new Map(), workSignal(context, params.timeout_s, 600));
      return {
        payload: {
          archive: manifest.archive,
          volumes: manifest.volumes.map((volume) => ({ name: volume.name, created: created.includes(volume.name) })),
          checksum_ok: true,
          duration_ms: Date.now() - startedUnixMs,
        },
      };
    }),
  );
}

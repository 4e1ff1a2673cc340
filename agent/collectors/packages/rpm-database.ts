import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { childProcess } from '../../lazy-builtins.ts';
import type { InstalledPackage } from './installed-package.ts';

/** One package a line: name, [epoch:]version-release, architecture and install time (seconds), as `rpm --queryformat` writes them. */
const QUERY_FORMAT = '%{NAME}\\t%|EPOCH?{%{EPOCH}:}:{}|%{VERSION}-%{RELEASE}\\t%{ARCH}\\t%{INSTALLTIME}\\n';

/**
 * The packages in an rpm database (`rpmdb.sqlite`, or the Berkeley DB or ndb
 * files of older and other rpm-based systems), read by the rpm program itself
 * with `--dbpath`: the one reader of every backend rpm has used. An agent in a
 * container without rpm says so.
 */
export async function readRpmDatabase(dbPath: string, rpm = 'rpm'): Promise<InstalledPackage[]> {
  try {
    return await query(dbPath, rpm);
  } catch (error) {
    if (!(error instanceof FleetError) || error.code !== 'collector_failed') throw error;
    // rpm opens its sqlite database for writing (its journal files beside it), which a read-only mount of the
    // host's root refuses: a copy in a folder of the agent's own is read instead.
    return readCopy(dbPath, rpm);
  }
}

async function readCopy(dbPath: string, rpm: string): Promise<InstalledPackage[]> {
  const copy = await mkdtemp(join(tmpdir(), 'fleetmesh-rpmdb-'));
  try {
    for (const entry of await readdir(dbPath, { withFileTypes: true })) {
      if (entry.isFile()) await copyFile(join(dbPath, entry.name), join(copy, entry.name));
    }
    return await query(copy, rpm);
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

function query(dbPath: string, rpm: string): Promise<InstalledPackage[]> {
  return new Promise((resolve, reject) => {
    childProcess().execFile(
      rpm,
      ['--dbpath', dbPath, '--query', '--all', '--queryformat', QUERY_FORMAT],
      { maxBuffer: 64 * 1024 * 1024, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' } },
      (error, stdout, stderr) => {
        if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') {
          reject(
            new FleetError('collector_unavailable', `the rpm database at ${dbPath} needs the rpm program, which this agent's system lacks`, {
              collector: 'packages',
              hint: 'Run the agent on the host itself, or in an image with rpm installed.',
            }),
          );
          return;
        }
        if (error) {
          reject(
            new FleetError('collector_failed', `rpm could not read ${dbPath}: ${stderr.trim().split('\n')[0] || error.message}`, { collector: 'packages' }),
          );
          return;
        }
        resolve(
          stdout
            .split('\n')
            .filter(Boolean)
            .map((line) => {
              const [name = '', version = '', arch = '', installed = ''] = line.split('\t');
              const seconds = Number(installed);
              return {
                name,
                version,
                architecture: arch && arch !== '(none)' ? arch : null,
                ...(Number.isInteger(seconds) && seconds > 0 ? { installedUnixMs: seconds * 1000 } : {}),
              };
            })
            .filter((pkg) => pkg.name && pkg.name !== 'gpg-pubkey'),
        );
      },
    );
  });
}

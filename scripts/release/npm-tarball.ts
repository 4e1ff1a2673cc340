/**
 * The npm package, packed in a staging directory: package.json without what
 * only a checkout uses (scripts, devDependencies, the install-script policy),
 *  README, CHANGELOG, the bin/ scripts (fleetmesh.cjs, fleetmesh.js) and a dist/ built
 * afresh (build-dist.ts).
 * Nothing is compiled at install time.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDist, REPO_ROOT } from './build-dist.ts';
import { runCommand } from './run-command.ts';

/**
 * The packed size the tarball must stay under. Measured at 0.1.0: 0.61 MB
 * (2.1 MB unpacked, 432 files), three quarters of it the web console and the
 * widget bundle; on 6 December 0.93 MB (3.1 MB unpacked, 669 files), 0.17 MB of
 * it the agent's own bundle, dist/agent.cjs (protobuf-es inside, on purpose).
 * About a sixth of headroom: a source map, a test or another bundled
 * dependency slipping in breaks it at once.
 */
export const NPM_TARBALL_BUDGET_BYTES = 1088 * 1024;

export interface NpmTarball {
  /** The .tgz written in the output directory. */
  path: string;
  /** Packed and unpacked sizes, as npm pack reports them. */
  bytes: number;
  unpackedBytes: number;
  /** Every path in the package, relative to its root. */
  files: string[];
}

/** Builds and packs fleetmesh into `outDir` (made if missing); `root` holds the package.json, README and CHANGELOG to pack (a release's). */
export async function packNpmTarball(outDir: string, root = REPO_ROOT): Promise<NpmTarball> {
  const stage = mkdtempSync(join(tmpdir(), 'fm-npm-stage-'));
  try {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
    delete manifest.scripts;
    delete manifest.devDependencies;
    delete manifest.allowScripts;
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const file of ['README.md', 'CHANGELOG.md']) copyFileSync(join(root, file), join(stage, file));
    mkdirSync(join(stage, 'bin'));
    for (const file of ['bin/fleetmesh.cjs', 'bin/fleetmesh.js']) copyFileSync(join(REPO_ROOT, file), join(stage, file));

    await buildDist(join(stage, 'dist'));

    mkdirSync(outDir, { recursive: true });
    const [packed] = JSON.parse(await runCommand('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', outDir], { cwd: stage })) as {
      filename: string;
      size: number;
      unpackedSize: number;
      files: { path: string }[];
    }[];
    if (!packed) throw new Error('npm pack reported no package');
    return { path: join(outDir, packed.filename), bytes: packed.size, unpackedBytes: packed.unpackedSize, files: packed.files.map((f) => f.path).sort() };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * One release: every version file moved to one version, then the four
 * artifacts made from them (the npm tarball, the image, the chart archive and
 * server.json), and release.json listing what was made with its size. The
 * tarball must stay under its budget, and every artifact must state the
 * version asked for, or the release fails.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageChart } from './chart-archive.ts';
import { buildImage } from './image-build.ts';
import { NPM_TARBALL_BUDGET_BYTES, packNpmTarball } from './npm-tarball.ts';
import type { ReleaseOptions } from './release-options.ts';
import { setVersion, versionsStated } from './version-files.ts';

export interface ReleaseManifest {
  version: string;
  npm: { file: string; bytes: number; unpackedBytes: number; budgetBytes: number };
  chart: { file: string };
  serverJson: { file: string };
  image?: { tag: string; id: string; bytes: number };
}

export async function makeRelease(options: ReleaseOptions, log: (line: string) => void = () => {}): Promise<ReleaseManifest> {
  const { root, version, outDir } = options;
  setVersion(root, version);
  const stated = [...new Set(versionsStated(root))];
  if (stated.length !== 1 || stated[0] !== version) throw new Error(`the version files disagree after the bump: ${stated.join(', ')}`);
  log(`version files at ${version}`);
  mkdirSync(outDir, { recursive: true });

  // npm pack and helm package name their archives alike (fleetmesh-VERSION.tgz): each in its own folder.
  const npm = await packNpmTarball(join(outDir, 'npm'), root);
  if (npm.bytes >= NPM_TARBALL_BUDGET_BYTES)
    throw new Error(`the npm tarball is ${npm.bytes} bytes, over its budget of ${NPM_TARBALL_BUDGET_BYTES} (scripts/release/npm-tarball.ts)`);
  log(`npm tarball   ${npm.path}: ${npm.bytes} bytes (${npm.unpackedBytes} unpacked, budget ${NPM_TARBALL_BUDGET_BYTES})`);

  const chart = await packageChart(join(outDir, 'helm'), join(root, 'charts/fleetmesh'));
  log(`helm chart    ${chart}`);

  const serverJson = join(outDir, 'server.json');
  copyFileSync(join(root, 'server.json'), serverJson);
  log(`registry      ${serverJson} (publish with mcp-publisher publish, after the npm package)`);

  const manifest: ReleaseManifest = {
    version,
    npm: { file: npm.path, bytes: npm.bytes, unpackedBytes: npm.unpackedBytes, budgetBytes: NPM_TARBALL_BUDGET_BYTES },
    chart: { file: chart },
    serverJson: { file: serverJson },
  };
  if (options.image) {
    const image = await buildImage(options.image, version, root);
    manifest.image = { tag: options.image.tag, ...image };
    log(`image         ${options.image.tag} ${image.id}: ${image.bytes} bytes`);
  }
  writeFileSync(join(outDir, 'release.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // What was packed says the version asked for.
  if (JSON.parse(readFileSync(serverJson, 'utf8')).version !== version) throw new Error('server.json does not state the release version');
  return manifest;
}

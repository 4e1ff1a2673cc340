import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../scripts/release/build-dist.ts';
import { makeRelease, type ReleaseManifest } from '../scripts/release/make-release.ts';
import { parseReleaseArgs } from '../scripts/release/release-options.ts';
import { runCommand } from '../scripts/release/run-command.ts';
import { setVersion, versionsStated } from '../scripts/release/version-files.ts';
import { buildNodeBase, removeImages } from './harness/fleetmesh-image.ts';
import { makeTempDir } from './harness/temp-dir.ts';

/** The files a release edits, copied so the checkout itself never moves. */
const VERSION_FILES = ['package.json', 'package-lock.json', 'Dockerfile', 'charts/fleetmesh', 'server.json', 'CHANGELOG.md', 'README.md'];

function copyVersionFiles(to: string): void {
  for (const file of VERSION_FILES) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(to, file), { recursive: true });
  }
}

const current = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const [major, minor] = current.split('.').map(Number) as [number, number];
/** The next minor version: what a release after this one would be. */
const next = `${major}.${minor + 1}.0`;

describe('versions and the release', () => {
  const temp = makeTempDir('fm-release-');
  afterAll(() => temp.remove());

  it('states one version in every file that names it: package, lock, image label, chart, registry entry', () => {
    expect(new Set(versionsStated(REPO_ROOT))).toEqual(new Set([current]));
  });

  it('moves every version file together and changes nothing else in them; the same version again changes nothing', () => {
    const root = join(temp.path, 'bump');
    copyVersionFiles(root);
    setVersion(root, next, new Date('2030-01-02T00:00:00Z'));
    expect(new Set(versionsStated(root))).toEqual(new Set([next]));
    for (const file of ['package.json', 'package-lock.json', 'Dockerfile', 'charts/fleetmesh/Chart.yaml', 'server.json', 'README.md']) {
      const before = readFileSync(join(REPO_ROOT, file), 'utf8').split('\n');
      const after = readFileSync(join(root, file), 'utf8').split('\n');
      expect(after.length, file).toBe(before.length);
      // Every changed line is a version line, and only its version changed.
      const changed = before.flatMap((line, index) => (line === after[index] ? [] : [[line, after[index]]]));
      if (file !== 'README.md') expect(changed.length, file).toBeGreaterThan(0);
      for (const [was, is] of changed) expect(is, file).toBe(was?.replaceAll(current, next));
    }
    const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toContain(`## Unreleased\n\n## ${next} (2030-01-02)\n`);
    const once = versionsStated(root);
    setVersion(root, next);
    expect(versionsStated(root)).toEqual(once);
    expect(readFileSync(join(root, 'CHANGELOG.md'), 'utf8')).toBe(changelog);
  });

  it('refuses a version that is not semantic, or lower than the current one', () => {
    const root = join(temp.path, 'refuse');
    copyVersionFiles(root);
    expect(() => setVersion(root, 'v2')).toThrow(/"v2" is not a semantic version/);
    expect(() => setVersion(root, '1.2')).toThrow(/not a semantic version/);
    if (major > 0 || minor > 0) expect(() => setVersion(root, '0.0.1')).toThrow(new RegExp(`lower than the current version ${current.replaceAll('.', '\\.')}`));
    expect(versionsStated(root)).toEqual(versionsStated(REPO_ROOT));
  });

  it('reads its command line once: the version, where the artifacts go, which image to build', () => {
    expect(parseReleaseArgs([next], {})).toMatchObject({
      version: next,
      root: REPO_ROOT,
      outDir: join(REPO_ROOT, 'release', next),
      image: { tag: `fleetmesh:${next}`, target: 'release' },
    });
    expect(parseReleaseArgs([next, '--no-image', '--out', '/tmp/x'], {})).toEqual({ version: next, root: REPO_ROOT, outDir: '/tmp/x' });
    expect(() => parseReleaseArgs([], {})).toThrow(/one VERSION is needed/);
    expect(() => parseReleaseArgs([next, '--image-target', 'nightly'], {})).toThrow(/--image-target is release or prebuilt/);
  });

  describe('making the artifacts', () => {
    const env = { ...process.env, DOCKER_HOST: inject('dockerHost') };
    const base = `fleetmesh-test/node-base-release:${process.pid}`;
    const tag = `fleetmesh-test/release:${process.pid}`;
    const root = join(temp.path, 'release');
    const out = join(temp.path, 'out');
    let manifest: ReleaseManifest;

    beforeAll(async () => {
      copyVersionFiles(root);
      // No base image can be pulled here: the image is the prebuilt target on one made from this machine's node.
      await buildNodeBase(env, base);
      manifest = await makeRelease({ version: next, root, outDir: out, image: { tag, target: 'prebuilt', baseImage: base, env } });
    }, 600_000);

    afterAll(async () => {
      await removeImages([tag, base], env);
    }, 60_000);

    it('makes the npm tarball, the image, the chart archive and server.json, each stating the one version', async () => {
      expect(manifest.version).toBe(next);
      const packed = JSON.parse(await runCommand('tar', ['-xzOf', manifest.npm.file, 'package/package.json']));
      expect(packed).toMatchObject({ name: 'fleetmesh', version: next });
      expect(manifest.npm.bytes).toBeLessThan(manifest.npm.budgetBytes);

      expect(manifest.chart.file).toBe(join(out, 'helm', `fleetmesh-${next}.tgz`));
      expect(manifest.npm.file).toBe(join(out, 'npm', `fleetmesh-${next}.tgz`));
      const chart = parse(await runCommand('tar', ['-xzOf', manifest.chart.file, 'fleetmesh/Chart.yaml']));
      expect(chart).toMatchObject({ version: next, appVersion: next });

      expect(JSON.parse(readFileSync(manifest.serverJson.file, 'utf8'))).toMatchObject({
        version: next,
        packages: [{ identifier: 'fleetmesh', version: next }],
      });

      expect(manifest.image).toMatchObject({ tag, id: expect.stringMatching(/^sha256:/) });
      expect((await runCommand('docker', ['run', '--rm', tag, '--version'], { env })).trim()).toBe(next);
      const labels = JSON.parse(await runCommand('docker', ['image', 'inspect', '--format', '{{json .Config.Labels}}', tag], { env }));
      expect(labels['org.opencontainers.image.version']).toBe(next);
      // The figures a release reports.
      console.info(`release ${next}: npm tarball ${manifest.npm.bytes} bytes, image ${manifest.image?.bytes} bytes`);

      expect(JSON.parse(readFileSync(join(out, 'release.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(manifest)));
    });
  });
});

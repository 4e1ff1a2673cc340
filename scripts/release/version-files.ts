/**
 * The one version of fleetmesh, in every file that states it: the npm package
 * (package.json and its lock), the image's version label (the Dockerfile's
 * default FLEETMESH_VERSION), the Helm chart (version and appVersion), the MCP
 * Registry entry (server.json and its npm package), the README's install
 * commands, and a CHANGELOG heading. Each file is edited as text, line by
 * line, so its formatting and everything else in it stay as they were.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$/;

/** Where each file states the version, as read from it. */
export interface StatedVersions {
  'package.json': string;
  'package-lock.json': string[];
  Dockerfile: string;
  'Chart.yaml version': string;
  'Chart.yaml appVersion': string;
  'server.json': string[];
}

const read = (root: string, file: string) => readFileSync(join(root, file), 'utf8');

function matchOrThrow(text: string, pattern: RegExp, where: string): string {
  const found = pattern.exec(text)?.[1];
  if (found === undefined) throw new Error(`${where}: no version where one was expected (${pattern})`);
  return found;
}

export function readVersions(root: string): StatedVersions {
  const lock = JSON.parse(read(root, 'package-lock.json'));
  const server = JSON.parse(read(root, 'server.json'));
  const chart = read(root, 'charts/fleetmesh/Chart.yaml');
  return {
    'package.json': JSON.parse(read(root, 'package.json')).version,
    'package-lock.json': [lock.version, lock.packages[''].version],
    Dockerfile: matchOrThrow(read(root, 'Dockerfile'), /^ARG FLEETMESH_VERSION=(\S+)$/m, 'Dockerfile'),
    'Chart.yaml version': matchOrThrow(chart, /^version: (\S+)$/m, 'Chart.yaml'),
    'Chart.yaml appVersion': matchOrThrow(chart, /^appVersion: "(\S+)"$/m, 'Chart.yaml'),
    'server.json': [server.version, ...server.packages.map((p: { version: string }) => p.version)],
  };
}

/** Every version stated, flattened: all equal when the files agree. */
export function versionsStated(root: string): string[] {
  return Object.values(readVersions(root)).flat();
}

/** Replaces the one match of `pattern` (its group 1 is the old version) with `version`, or fails naming the file. */
function replaceVersion(text: string, pattern: RegExp, version: string, where: string): string {
  let count = 0;
  const replaced = text.replace(pattern, (whole: string, old: string) => {
    count += 1;
    return whole.replace(old, version);
  });
  if (count === 0) throw new Error(`${where}: no version where one was expected (${pattern})`);
  return replaced;
}

/**
 * Moves every file to `version`. Refuses what is not a semantic version and
 * a version below the current one; the same version again changes nothing.
 */
export function setVersion(root: string, version: string, today = new Date()): void {
  if (!SEMVER.test(version)) throw new Error(`"${version}" is not a semantic version (MAJOR.MINOR.PATCH, optionally -PRERELEASE)`);
  const current = JSON.parse(read(root, 'package.json')).version as string;
  const order = (v: string) => (SEMVER.exec(v) ?? []).slice(1, 4).map(Number);
  const [a, b] = [order(version), order(current)];
  const compared = a.map((part, i) => part - (b[i] ?? 0)).find((difference) => difference !== 0) ?? 0;
  if (compared < 0) throw new Error(`${version} is lower than the current version ${current}`);

  const edit = (file: string, change: (text: string) => string) => writeFileSync(join(root, file), change(read(root, file)));
  edit('package.json', (text) => replaceVersion(text, /^ {2}"version": "([^"]+)"/m, version, 'package.json'));
  // The lock states it twice: at its top and for the root package.
  edit('package-lock.json', (text) =>
    replaceVersion(
      replaceVersion(text, /^ {2}"version": "([^"]+)"/m, version, 'package-lock.json'),
      /^ {4}"": \{\n(?: {6}.*\n)*? {6}"version": "([^"]+)"/m,
      version,
      'package-lock.json',
    ),
  );
  edit('Dockerfile', (text) => replaceVersion(text, /^ARG FLEETMESH_VERSION=(\S+)$/m, version, 'Dockerfile'));
  edit('charts/fleetmesh/Chart.yaml', (text) =>
    replaceVersion(replaceVersion(text, /^version: (\S+)$/m, version, 'Chart.yaml'), /^appVersion: "(\S+)"$/m, version, 'Chart.yaml'),
  );
  edit('server.json', (text) => text.replace(/^( {2}| {6})"version": "([^"]+)"/gm, (_whole, indent: string) => `${indent}"version": "${version}"`));
  // The README's install commands name the image, the package, the chart archive and the release tag at the current version.
  if (existsSync(join(root, 'README.md'))) {
    edit('README.md', (text) =>
      [`fleetmesh:`, `fleetmesh@`, `fleetmesh-`, `.git#v`].reduce((updated, prefix) => updated.replaceAll(`${prefix}${current}`, `${prefix}${version}`), text),
    );
  }
  edit('CHANGELOG.md', (text) => {
    if (new RegExp(`^## ${version.replaceAll('.', '\\.')}( |$)`, 'm').test(text)) return text;
    // What was under Unreleased is now this version's.
    return replaceVersion(text, /^## (Unreleased)$/m, `Unreleased\n\n## ${version} (${today.toISOString().slice(0, 10)})`, 'CHANGELOG.md');
  });
}

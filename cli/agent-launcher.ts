import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where a printed command runs, as the launcher is chosen for it (all absolute paths). */
export interface LaunchPlace {
  /** The PATH the command will be typed under. */
  path: string;
  /** The directory it will be typed in. */
  cwd: string;
  /** The fleetmesh package this CLI is (the directory holding its package.json). */
  packageRoot: string;
}

function realOrNull(file: string): string | null {
  try {
    return realpathSync(file);
  } catch {
    return null;
  }
}

/** The directory of the fleetmesh package a module of it lives in (its source or its build). */
function packageRootOf(moduleDir: string): string {
  for (let dir = moduleDir; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'fleetmesh') return dir;
    if (dirname(dir) === dir) return resolve(moduleDir, '..', '..');
  }
}

/** This CLI's place: the current PATH and directory, and the package it runs from. */
export function currentLaunchPlace(): LaunchPlace {
  return { path: process.env.PATH ?? '', cwd: process.cwd(), packageRoot: packageRootOf(dirname(fileURLToPath(import.meta.url))) };
}

/**
 * The words that start `fleetmesh` from `place`, so a command printed there
 * runs as printed: `fleetmesh` when the one on PATH is this package (installed
 * globally), `npx fleetmesh` inside this package's checkout or a project that
 * has it in node_modules, and otherwise node with the absolute path of its bin.
 */
export function agentLauncher(place: LaunchPlace): string {
  const bin = join(place.packageRoot, 'bin', 'fleetmesh.js');
  const own = realOrNull(bin);
  for (const dir of place.path.split(delimiter).filter(Boolean)) {
    if (own !== null && realOrNull(join(dir, 'fleetmesh')) === own) return 'fleetmesh';
  }
  const inside = (root: string) => {
    const rel = relative(root, place.cwd);
    return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && !rel.includes(`..${sep}`));
  };
  if (inside(place.packageRoot)) return 'npx fleetmesh';
  for (let dir = place.cwd; dirname(dir) !== dir; dir = dirname(dir)) {
    if (realOrNull(join(dir, 'node_modules', 'fleetmesh', 'bin', 'fleetmesh.js')) === own && own !== null) return 'npx fleetmesh';
  }
  return `node ${bin}`;
}

/**
 * The build context of the Dockerfile's `prebuilt` target, for a machine where
 * the image's build stage cannot run (no base image to pull, no registry from
 * inside a build): what that stage would make, made here instead. package.json
 * and its lock, the three bin/ scripts, a dist/ built afresh (build-dist.ts), the
 * installed production packages (their native module built for this
 * machine's node) and, under sbom-generator/, the SBOM generator with the
 * packages it needs, which the Dockerfile runs as it would in the build stage.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { buildDist, REPO_ROOT } from './build-dist.ts';
import { runCommand } from './run-command.ts';

/** The SBOM generator, a devDependency pinned in package-lock.json. */
export const SBOM_GENERATOR = '@cyclonedx/cyclonedx-npm';

/** Top-level names of the installed production packages (copying one copies what is nested in it). */
async function productionPackages(): Promise<string[]> {
  const listed = (await runCommand('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: REPO_ROOT })).split('\n');
  const nodeModules = join(REPO_ROOT, 'node_modules');
  return [
    ...new Set(
      listed
        .filter((path) => path.startsWith(`${nodeModules}/`))
        .map((path) => relative(nodeModules, path))
        .filter((name) => !name.includes('/node_modules/'))
        .map((name) =>
          name
            .split('/')
            .slice(0, name.startsWith('@') ? 2 : 1)
            .join('/'),
        ),
    ),
  ];
}

/** Where node would find `name` from a package in `from`: its own node_modules, then each one above it. */
function resolvePackage(name: string, from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === REPO_ROOT || dirname(dir) === dir) throw new Error(`${name}, needed by ${relative(REPO_ROOT, from)}, is not installed: run npm ci`);
  }
}

/** A package and everything its `dependencies` need (optional ones left out), as paths under the repo's node_modules. */
function dependencyClosure(name: string): string[] {
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(resolvePackage(dependency, path));
  };
  visit(resolvePackage(name, REPO_ROOT));
  return [...seen];
}

/** Fills `dir` (empty) with the prebuilt target's context; `root` holds the Dockerfile, package.json and lock to use (a release's). */
export async function stageImageContext(dir: string, root = REPO_ROOT): Promise<void> {
  for (const file of ['Dockerfile', 'package.json', 'package-lock.json', 'bin/fleetmesh.cjs', 'bin/fleetmesh.js', 'bin/healthcheck.js']) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(file.startsWith('bin/') ? REPO_ROOT : root, file), join(dir, file));
  }
  await buildDist(join(dir, 'dist'));
  for (const name of await productionPackages()) {
    cpSync(join(REPO_ROOT, 'node_modules', name), join(dir, 'node_modules', name), { recursive: true, dereference: true });
  }
  for (const path of dependencyClosure(SBOM_GENERATOR)) {
    cpSync(path, join(dir, 'sbom-generator', relative(REPO_ROOT, path)), { recursive: true, dereference: true });
  }
}

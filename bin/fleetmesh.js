#!/usr/bin/env node
// Runs the fleetmesh CLI from the built JavaScript in dist/ (npm run build;
// npm ci builds it too) when it is current, else from the TypeScript sources
// through tsx, which compiles on every run. The image ships dist/ only.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = new URL('../dist/cli/main.js', import.meta.url);

/** The directories `npm run build` compiles (tsconfig.build.json). */
const SOURCE_DIRS = ['shared', 'broker', 'agent', 'cli'];

/**
 * Whether every source file has its compiled twin and none is newer than it: a
 * stat per file and twin, a few milliseconds. Editing, adding or checking out
 * a file makes dist stale until the next build, and the sources run instead.
 */
function builtIsCurrent() {
  for (const dir of SOURCE_DIRS) {
    for (const file of readdirSync(`${root}${dir}`, { recursive: true })) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.endsWith('.d.ts')) continue;
      const twin = statSync(`${root}dist/${dir}/${file.slice(0, -3)}.js`, { throwIfNoEntry: false });
      if (!twin || twin.mtimeMs < statSync(`${root}${dir}/${file}`).mtimeMs) return false;
    }
  }
  return true;
}

if (!existsSync(`${root}cli/main.ts`) || (existsSync(built) && builtIsCurrent())) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../cli/main.ts', import.meta.url).href);
}

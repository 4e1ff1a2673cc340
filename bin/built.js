// Whether dist/ holds a current build of the sources: read by the fleetmesh
// command (run the built JavaScript, or the sources through tsx) and by
// `npm run prepare` (build only what is stale). A stat per file, a few
// milliseconds; editing, adding or checking out a file makes its build stale.
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The directories `tsc -p tsconfig.build.json` compiles. */
const CODE_DIRS = ['shared', 'broker', 'agent', 'cli'];

function mtime(path) {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs;
}

/** Every source file has its compiled twin in dist/ and none is newer than it. */
export function codeIsBuilt() {
  for (const dir of CODE_DIRS) {
    for (const file of readdirSync(`${root}${dir}`, { recursive: true })) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.endsWith('.d.ts')) continue;
      const twin = mtime(`${root}dist/${dir}/${file.slice(0, -3)}.js`);
      if (twin === undefined || twin < mtime(`${root}${dir}/${file}`)) return false;
    }
  }
  return true;
}

/** The agent's bundle (dist/agent.cjs, bin/build-agent.js) is newer than every source file it could hold and package.json. */
export function agentBundleIsBuilt() {
  const built = mtime(`${root}dist/agent.cjs`);
  if (built === undefined || built < (mtime(`${root}package.json`) ?? 0)) return false;
  for (const dir of ['shared', 'agent', 'cli']) {
    for (const file of readdirSync(`${root}${dir}`, { recursive: true })) {
      if (file.endsWith('.ts') && !file.endsWith('.test.ts') && (mtime(`${root}${dir}/${file}`) ?? 0) > built) return false;
    }
  }
  return true;
}

/** The console and the widgets were built (dist/web) after the last change to anything under web/. */
export function webIsBuilt() {
  const built = Math.min(mtime(`${root}dist/web/index.html`) ?? 0, mtime(`${root}dist/web/widgets/widgets.js`) ?? 0);
  if (built === 0) return false;
  for (const entry of readdirSync(`${root}web`, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && (mtime(`${entry.parentPath ?? entry.path}/${entry.name}`) ?? 0) > built) return false;
  }
  return true;
}

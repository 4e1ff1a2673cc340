// `npm run prepare` (after `npm ci`, and when npx links this checkout to run
// its bin): builds dist/ where it is missing or older than the sources, and
// nothing when it is current, so `npx fleetmesh …` does not rebuild the whole
// product on its first run. With --web, only the console and widgets. The
// agent's bundle (bin/build-agent.js) is built the same way.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { agentBundleIsBuilt, codeIsBuilt, webIsBuilt } from './built.js';

const root = fileURLToPath(new URL('..', import.meta.url));
// A copy without the build tools (the image, an install as a dependency) has nothing to build with.
if (!existsSync(`${root}node_modules/typescript`) || !existsSync(`${root}tsconfig.build.json`)) process.exit(0);

const run = (script) => execFileSync('npm', ['run', '--silent', script], { cwd: root, stdio: 'inherit' });
const webOnly = process.argv.includes('--web');
if (!webOnly && !codeIsBuilt())
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (!webOnly && !agentBundleIsBuilt()) execFileSync(process.execPath, [`${root}bin/build-agent.js`], { cwd: root, stdio: 'inherit' });
if (!webIsBuilt()) run('build:web');

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir } from './harness/temp-dir.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * `npm run prepare` runs after `npm ci` and whenever npx links this checkout
 * to run its bin (`npx fleetmesh …`): it must build what is stale and nothing
 * else. Tried on a checkout of its own whose "compiler" and "bundlers" only
 * note that they ran.
 */
describe('npm run prepare builds only what is stale', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let root: string;
  /** Each file written is a second younger than the one before: the order of the calls is the order of the changes. */
  let clock = 0;
  const file = (path: string, text = '') => {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
    clock += 1;
    utimesSync(full, clock, clock);
  };
  const prepare = (...args: string[]): string[] => {
    rmSync(join(root, 'ran'), { force: true });
    execFileSync(process.execPath, [join(root, 'bin/prepare.js'), ...args], { cwd: root, stdio: 'pipe' });
    try {
      return readFileSync(join(root, 'ran'), 'utf8').trim().split('\n');
    } catch {
      return [];
    }
  };

  beforeEach(() => {
    temp = makeTempDir('fleetmesh-prepare-');
    clock = Date.now() / 1000 - 3600;
    root = temp.path;
    for (const name of ['prepare.js', 'built.js']) {
      mkdirSync(join(root, 'bin'), { recursive: true });
      copyFileSync(join(REPO, 'bin', name), join(root, 'bin', name));
    }
    const note = (what: string) => `require('node:fs').appendFileSync(${JSON.stringify(join(root, 'ran'))}, '${what}\\n')`;
    file('node_modules/typescript/bin/tsc', note('tsc'));
    file('bin/build-agent.js', note('bundle'));
    file('tsconfig.build.json', '{}');
    file('package.json', JSON.stringify({ name: 'prepare-test', scripts: { 'build:web': `node -e "${note('web').replace(/"/g, '\\"')}"` } }));
    for (const dir of ['shared', 'broker', 'agent', 'cli']) file(`${dir}/index.ts`);
    file('web/src/page.ts');
  });
  afterEach(() => temp.remove());

  const buildEverything = () => {
    for (const dir of ['shared', 'broker', 'agent', 'cli']) file(`dist/${dir}/index.js`);
    file('dist/agent.cjs');
    file('dist/web/index.html');
    file('dist/web/widgets/widgets.js');
  };

  it("builds the code, the agent's bundle and the web pages of a fresh checkout", () => {
    expect(prepare()).toEqual(['tsc', 'bundle', 'web']);
  });

  it('builds nothing when dist/ is current (the first npx fleetmesh of a built checkout)', () => {
    buildEverything();
    expect(prepare()).toEqual([]);
    expect(prepare('--web')).toEqual([]);
  });

  it("compiles again when a source file is newer than its build, or has none, and bundles the agent again when it is the agent's", () => {
    buildEverything();
    file('broker/index.ts');
    expect(prepare()).toEqual(['tsc']);
    buildEverything();
    file('agent/new-file.ts');
    expect(prepare()).toEqual(['tsc', 'bundle']);
    // Test files are not built.
    rmSync(join(root, 'agent/new-file.ts'));
    file('agent/new-file.test.ts');
    expect(prepare()).toEqual([]);
  });

  it('bundles the web pages again when anything under web/ changed, and --web (npm start) does only that', () => {
    buildEverything();
    file('web/src/page.ts');
    file('cli/index.ts');
    expect(prepare('--web')).toEqual(['web']);
    expect(prepare()).toEqual(['tsc', 'bundle', 'web']);
  });

  it('does nothing where there is nothing to build with (an install without the dev tools)', () => {
    rmSync(join(root, 'node_modules'), { recursive: true });
    expect(prepare()).toEqual([]);
  });
});

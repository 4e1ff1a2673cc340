import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The compiled build (dist/), which the image ships: agents under benchmark run from it, with no TypeScript loader. */
export const DIST_MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
/** The agent's bundle, which the agent's deployments run (bin/build-agent.js). */
export const DIST_AGENT = fileURLToPath(new URL('../../dist/agent.cjs', import.meta.url));

let built: Promise<void> | undefined;

/** Builds dist/ and the agent's bundle once per benchmark run, however many scenarios ask for it. */
export function buildDist(): Promise<void> {
  built ??= (async () => {
    process.stderr.write('  building dist/…\n');
    await run(process.execPath, [
      fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url)),
      '-p',
      fileURLToPath(new URL('../../tsconfig.build.json', import.meta.url)),
    ]);
    await run(process.execPath, [fileURLToPath(new URL('../../bin/build-agent.js', import.meta.url))]);
  })();
  return built;
}

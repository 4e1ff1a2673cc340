import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The compiled build (dist/), which the image ships: agents under benchmark run from it, with no TypeScript loader. */
export const DIST_MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

let built: Promise<void> | undefined;

/** Builds dist/ once per benchmark run, however many scenarios ask for it. */
export function buildDist(): Promise<void> {
  built ??= (async () => {
    process.stderr.write('  building dist/…\n');
    await run(process.execPath, [
      fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url)),
      '-p',
      fileURLToPath(new URL('../../tsconfig.build.json', import.meta.url)),
    ]);
  })();
  return built;
}

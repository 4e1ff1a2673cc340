#!/usr/bin/env node
// The fleetmesh command. Installed from npm (or in the image) it runs the built
// JavaScript in dist/ and nothing else: the package ships neither the sources
// nor tsx. In a checkout of the repository it runs dist/ while it is current
// (npm ci and npm start build it), else the TypeScript sources through tsx,
// which compiles on every run.
import { existsSync } from 'node:fs';

const built = new URL('../dist/cli/main.js', import.meta.url);
const checkout = existsSync(new URL('../cli/main.ts', import.meta.url));

if (!checkout) {
  if (!existsSync(built)) {
    process.stderr.write('fleetmesh: dist/cli/main.js is missing from this installation (reinstall the package)\n');
    process.exit(1);
  }
  await import(built.href);
} else if (existsSync(built) && (await import('./built.js')).codeIsBuilt()) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../cli/main.ts', import.meta.url).href);
}

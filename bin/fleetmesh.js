#!/usr/bin/env node
// Runs the fleetmesh CLI: from the TypeScript sources in a checkout (through
// tsx), or from dist/ where only the build is shipped (the container image).
import { existsSync } from 'node:fs';

const source = new URL('../cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/cli/main.js', import.meta.url).href);
}

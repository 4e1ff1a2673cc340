#!/usr/bin/env node
// Runs the fleetmesh CLI from the built JavaScript in dist/ (npm run build;
// npm ci builds it too) when it is current, else from the TypeScript sources
// through tsx, which compiles on every run. The image ships dist/ only.
import { existsSync } from 'node:fs';

const built = new URL('../dist/cli/main.js', import.meta.url);
const fromSources = existsSync(new URL('../cli/main.ts', import.meta.url));

// The image ships dist/ without the sources (nor bin/built.js): nothing to compare.
if (!fromSources || (existsSync(built) && (await import('./built.js')).codeIsBuilt())) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../cli/main.ts', import.meta.url).href);
}

// Preloaded into a fleetmesh process by a test (node --import): on SIGUSR2 it writes to
// FLEETMESH_TEST_LOADED_FILE whether the schema library has loaded, which CommonJS modules have, and which of
// Node's built-in modules (node:readline, node:zlib…) have.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const file = process.env.FLEETMESH_TEST_LOADED_FILE;
const modules = createRequire(import.meta.url).cache;

process.on('SIGUSR2', () => {
  if (!file) return;
  // zod sets this global when it loads (as an ES module or through require).
  const builtins = process.moduleLoadList.filter((entry) => entry.startsWith('NativeModule ')).map((entry) => entry.slice('NativeModule '.length));
  writeFileSync(file, JSON.stringify({ zod: '__zod_globalConfig' in globalThis, commonjs: Object.keys(modules), builtins }));
});

#!/usr/bin/env node
// Runs a TypeScript entry point of this repo (benchmarks, tools) through tsx.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  process.stderr.write('usage: node bin/run-ts.js FILE.ts [args…]\n');
  process.exit(2);
}
process.argv = [process.argv[0], resolve(entry), ...rest];
const { register } = await import('tsx/esm/api');
register();
await import(pathToFileURL(resolve(entry)).href);

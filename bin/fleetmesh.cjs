#!/usr/bin/env node
// The fleetmesh command as installed: the npm package's bin and the image's entrypoint. It is
// CommonJS so that `fleetmesh agent` on an installation starts the agent's bundle, dist/agent.cjs,
// without Node's ES module loader, and with the V8 flags every deployment gives the agent
// (docs/performance.md, the idle agent): on a Node that can replace its own process
// (process.execve, Node 22.15 and later) it does so, keeping its pid, so `docker run IMAGE agent …`
// and a service manager see the agent itself. A node started with flags of its own keeps them and
// runs the bundle as it is. Every other command, and any command in a checkout of the repository,
// goes to bin/fleetmesh.js.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

/** The agent's V8 flags, as docker-compose.yml and the Helm chart give them. */
const AGENT_FLAGS = ['--max-semi-space-size=1', '--lite-mode', '--bytecode-old-age=1'];

const root = join(__dirname, '..');
const bundle = join(root, 'dist', 'agent.cjs');
const installed = !existsSync(join(root, 'cli', 'main.ts'));

if (installed && process.argv[2] === 'agent' && existsSync(bundle)) {
  if (typeof process.execve === 'function' && process.execArgv.length === 0) {
    process.execve(process.execPath, [process.execPath, ...AGENT_FLAGS, bundle, ...process.argv.slice(2)], process.env);
  }
  require(bundle);
} else {
  import('./fleetmesh.js').catch((error) => {
    process.stderr.write(`fleetmesh: ${error?.stack ?? error}\n`);
    process.exit(1);
  });
}

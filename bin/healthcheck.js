#!/usr/bin/env node
// The image's HEALTHCHECK. One image runs every role, so this reads which one
// the container runs from its first process's command line, and where that
// role serves /readyz from the same flag or FLEETMESH_* variable the process
// read: the broker's (or `up`'s) MCP listener, the agent's --health-listen.
// An agent without a health listener, and one-shot commands (bootstrap,
// --help), have nothing to probe and count as healthy. Exit 0 healthy, 1 not.
import { readFileSync } from 'node:fs';

const argv = readFileSync('/proc/1/cmdline', 'utf8').split('\0').filter(Boolean);
const entry = argv.findIndex((arg) => arg.endsWith('fleetmesh.js') || arg.endsWith('/fleetmesh'));
const args = entry === -1 ? [] : argv.slice(entry + 1);

/** A flag's value as `--name VALUE` or `--name=VALUE`, else the variable's. */
function setting(flag, variable) {
  for (const [index, arg] of args.entries()) {
    if (arg === flag) return args[index + 1];
    if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
  }
  return process.env[variable];
}

const role = args[0];
const listen =
  role === 'broker' || role === 'up'
    ? (setting('--mcp-listen', 'FLEETMESH_MCP_LISTEN') ?? '127.0.0.1:7400')
    : role === 'agent'
      ? setting('--health-listen', 'FLEETMESH_HEALTH_LISTEN')
      : undefined;
if (!listen || listen === 'off') process.exit(0);

// A listener on every address answers on loopback, the Host the broker accepts by default (as compose's probes rely on).
const port = listen.slice(listen.lastIndexOf(':') + 1);
const host = listen.slice(0, listen.lastIndexOf(':')).replace(/^\[|\]$/g, '');
const address = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
try {
  const response = await fetch(`http://${address.includes(':') ? `[${address}]` : address}:${port}/readyz`, { signal: AbortSignal.timeout(4000) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}

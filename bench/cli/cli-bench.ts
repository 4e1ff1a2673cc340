import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createIdentity } from '../../broker/auth/identities.ts';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { percentile, type ScenarioResult } from '../report.ts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/fleetmesh.js', import.meta.url));
const RUN_TS = fileURLToPath(new URL('../../bin/run-ts.js', import.meta.url));
const MAIN_TS = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));

/** Wall times of `runs` runs of one command line, one after the other. */
async function wallTimesMs(args: string[], runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await run(process.execPath, args);
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * How long a user waits for the CLI: `fleetmesh --help` and `fleetmesh call
 * get_fleet_status` (against a broker in this process, with no agent) from the
 * build, beside `node -e 0` (Node's own start-up) and `--help` from the
 * TypeScript sources through tsx (what runs while dist/ is stale), all in the
 * same run. Builds dist/ first.
 */
export async function cliScenario(options: { runs: number }): Promise<ScenarioResult> {
  process.stderr.write('  building dist/…\n');
  await run(process.execPath, [
    fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url)),
    '-p',
    fileURLToPath(new URL('../../tsconfig.build.json', import.meta.url)),
  ]);
  const root = mkdtempSync(join(tmpdir(), 'fm-bench-cli-'));
  const broker = await Broker.start(inProcessBrokerOptions(join(root, 'broker')), silentLogger);
  try {
    const { token } = await createIdentity(broker.store, { name: 'bench', level: 1 });
    const nodeStart = await wallTimesMs(['-e', '0'], options.runs);
    const help = await wallTimesMs([BIN, '--help'], options.runs);
    const call = await wallTimesMs([BIN, 'call', 'get_fleet_status', '--url', broker.mcpUrl, '--token', token], options.runs);
    const helpFromSources = await wallTimesMs([RUN_TS, MAIN_TS, '--help'], options.runs);
    return {
      scenario: `cli (${options.runs} runs each, wall time)`,
      figures: {
        'node -e 0 p50 ms': percentile(nodeStart, 50),
        'fleetmesh --help p50 ms': percentile(help, 50),
        'fleetmesh --help max ms': Math.max(...help),
        'fleetmesh call get_fleet_status p50 ms': percentile(call, 50),
        'fleetmesh call get_fleet_status max ms': Math.max(...call),
        'fleetmesh --help from sources (tsx) p50 ms': percentile(helpFromSources, 50),
      },
    };
  } finally {
    await broker.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

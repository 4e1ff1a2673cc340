/**
 * `npm run bench`: every benchmark scenario, or those named with --only.
 *   npm run bench -- --only mesh --agents 500,2000 --rounds 50
 */
import { parseArgs } from 'node:util';
import { meshScenario } from './mesh/mesh-bench.ts';
import { report, type ScenarioResult } from './report.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    agents: { type: 'string', default: '500,2000' },
    rounds: { type: 'string', default: '50' },
  },
});

const selected = new Set((values.only ?? 'mesh').split(','));
const results: ScenarioResult[] = [];
if (selected.has('mesh')) {
  for (const count of (values.agents ?? '').split(',').map(Number)) {
    process.stderr.write(`mesh: ${count} agents\n`);
    results.push(await meshScenario(count, Number(values.rounds)));
  }
}
report(`npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(), results);
process.exit(0);

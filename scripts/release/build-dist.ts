import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from './run-command.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Compiles the product afresh into `outDir` (a dist/ of its own): the code
 * without source maps (they point at sources no artifact ships), the agent's
 * bundle (`agent.cjs`, what the agent's deployments run), then the web console
 * and the widgets. Unlike `npm run build`, nothing of an earlier build
 * whose source is gone rides along, and the checkout's dist/, which tests run
 * from, is left alone.
 */
export async function buildDist(outDir: string): Promise<void> {
  const bin = (name: string) => join(REPO_ROOT, 'node_modules', '.bin', name);
  await runCommand(bin('tsc'), ['-p', join(REPO_ROOT, 'tsconfig.build.json'), '--outDir', outDir, '--sourceMap', 'false'], { cwd: REPO_ROOT });
  await runCommand(process.execPath, [join(REPO_ROOT, 'bin', 'build-agent.js'), join(outDir, 'agent.cjs')], { cwd: REPO_ROOT });
  // The console first: its build empties dist/web, the widgets' only dist/web/widgets.
  await runCommand(bin('vite'), ['build', '-c', 'web/vite.config.ts', '--outDir', join(outDir, 'web')], { cwd: REPO_ROOT });
  await runCommand(bin('vite'), ['build', '-c', 'web/vite.widgets.config.ts', '--outDir', join(outDir, 'web', 'widgets')], { cwd: REPO_ROOT });
}

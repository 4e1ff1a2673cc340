import { join } from 'node:path';
import { build } from 'vite';
import { makeTempDir } from './temp-dir.ts';

const WEB = join(import.meta.dirname, '..', '..', 'web');

/**
 * The console and widgets built from the current sources into a temp dir, as
 * `npm run build` builds them into dist/web: a test never runs against a
 * stale build.
 */
export async function buildWebAssets(): Promise<{ dir: string; remove(): void }> {
  const temp = makeTempDir();
  const dir = join(temp.path, 'web');
  await build({ configFile: join(WEB, 'vite.config.ts'), logLevel: 'error', build: { outDir: dir } });
  await build({ configFile: join(WEB, 'vite.widgets.config.ts'), logLevel: 'error', build: { outDir: join(dir, 'widgets') } });
  return { dir, remove: temp.remove };
}

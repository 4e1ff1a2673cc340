/**
 * The Helm chart as `helm package` lays it out, without the Helm binary: a
 * gzipped tar of charts/fleetmesh under a top folder named after the chart,
 * written as <name>-<version>.tgz (the name helm repo index and helm install
 * expect). Entries are sorted, owned by root and dated 1970, so one chart
 * always makes the same archive.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'yaml';
import { REPO_ROOT } from './build-dist.ts';
import { runCommand } from './run-command.ts';

export const CHART_DIR = join(REPO_ROOT, 'charts/fleetmesh');

/** Writes the archive of the chart in `chartDir` (a release's) into `outDir` (made if missing) and returns its path. */
export async function packageChart(outDir: string, chartDir = CHART_DIR): Promise<string> {
  const { name, version } = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { name: string; version: string };
  if (basename(chartDir) !== name) throw new Error(`the chart in ${chartDir} is named ${name}: its folder must carry its name`);
  const tar = await runCommand(
    'tar',
    ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '--mode=u+rw,go+r,go-w', '-C', dirname(chartDir), '-c', name],
    { binary: true },
  );
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, `${name}-${version}.tgz`);
  writeFileSync(path, gzipSync(tar, { level: 9 }));
  return path;
}

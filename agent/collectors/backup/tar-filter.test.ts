import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { TarFilter } from './tar-filter.ts';

const root = mkdtempSync(join(tmpdir(), 'fm-tar-filter-'));
const longDir = `${'deep-folder-name-'.repeat(5)}end`;
const volume = join(root, 'fleetmesh-volumes', 'data');
for (const dir of ['cache/inner', 'logs', longDir]) mkdirSync(join(volume, dir), { recursive: true });
for (const file of [
  'keep.txt',
  'cache/inner/a',
  'logs/app.log',
  'logs/keep.txt',
  'top.log',
  `${longDir}/${'long-file-name-'.repeat(4)}.log`,
  `${longDir}/kept`,
]) {
  writeFileSync(join(volume, file), `content of ${file}\n`.repeat(100));
}

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The archive of the volume folder in a tar format, passed through the filter in small pieces, as tar lists it. */
async function filtered(format: 'pax' | 'gnu', exclude: string[]): Promise<{ names: string[]; filter: TarFilter }> {
  const tar = execFileSync('tar', ['-C', root, `--format=${format}`, '-cf', '-', 'fleetmesh-volumes'], { maxBuffer: 64 * 1024 * 1024 });
  const pieces = Array.from({ length: Math.ceil(tar.length / 700) }, (_, i) => tar.subarray(i * 700, (i + 1) * 700));
  const filter = new TarFilter(exclude, 2);
  const out: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    Readable.from(pieces)
      .pipe(filter)
      .on('data', (chunk: Buffer) => out.push(chunk))
      .on('end', resolve)
      .on('error', reject);
  });
  const names = execFileSync('tar', ['-tf', '-'], { input: Buffer.concat(out) })
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((name) => name.replace(/^fleetmesh-volumes\/data\/?/, '').replace(/\/$/, ''))
    .filter((name) => name && name !== 'fleetmesh-volumes')
    .sort();
  return { names, filter };
}

describe('TarFilter', () => {
  for (const format of ['pax', 'gnu'] as const) {
    it(`drops excluded folders, file-name globs and long names in ${format} archives, keeping a valid tar`, async () => {
      const { names, filter } = await filtered(format, ['cache', '*.log']);
      expect(names).toEqual([longDir, `${longDir}/kept`, 'keep.txt', 'logs', 'logs/keep.txt']);
      expect(filter.excluded).toBe(6);
    });
  }

  it('keeps everything without patterns, and matches a pattern with a slash against the path inside the volume', async () => {
    expect((await filtered('pax', [])).names).toHaveLength(11);
    const { names } = await filtered('pax', ['logs/*.log']);
    expect(names).toContain('top.log');
    expect(names).toContain('logs/keep.txt');
    expect(names).not.toContain('logs/app.log');
  });
});

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import { tarFile } from './tar-file.ts';

/** A ustar archive of files written by tar itself, and its length without the end blocks tar adds. */
function tarOf(dir: string, files: Record<string, string>): { archive: Buffer; withoutEnd: Buffer } {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const archive = execFileSync('tar', ['--format=ustar', '-C', dir, '-cf', '-', ...Object.keys(files)]);
  const used = Object.values(files).reduce((sum, text) => sum + 512 + Math.ceil(Buffer.byteLength(text) / 512) * 512, 0);
  return { archive, withoutEnd: archive.subarray(0, used) };
}

describe('tarFile', () => {
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('finds a file of a signed apk index: the signature’s archive without end blocks, then the index’s, each gzipped on its own', () => {
    const signature = makeTempDir('fm-tar-sig-');
    const index = makeTempDir('fm-tar-index-');
    stops.push(signature.remove, index.remove);
    const signed = tarOf(signature.path, { '.SIGN.RSA.alpine.rsa.pub': 'x'.repeat(600) });
    const body = tarOf(index.path, { DESCRIPTION: 'v3.23', APKINDEX: 'P:musl\nV:1.2.5-r21\n\n' });
    const file = Buffer.concat([gzipSync(signed.withoutEnd), gzipSync(body.archive)]);
    const tar = gunzipSync(file);
    expect(tarFile(tar, 'APKINDEX')?.toString()).toBe('P:musl\nV:1.2.5-r21\n\n');
    expect(tarFile(tar, 'DESCRIPTION')?.toString()).toBe('v3.23');
    expect(tarFile(tar, 'NOTHERE')).toBeUndefined();
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileRead, fileStat } from '../../../shared/domains/files/files-actions.ts';
import { resolveFilesOptions } from '../../../shared/domains/files/files-options.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { FilesCollector } from './files-collector.ts';

const NO_ENGINE = {} as EngineClient;

describe('the files collector on real files', () => {
  const temp = makeTempDir('fm-files-');
  const root = temp.path;
  const app = join(root, 'etc', 'app');
  const collectors: CollectorCalls<FilesCollector>[] = [];
  /** A collector of this host allowing these globs, as the agent makes it from its flags. */
  const allowing = (paths: string[], more: { maxKib?: number; showSecrets?: boolean } = {}) => {
    const calls = new CollectorCalls(
      () => new FilesCollector(resolveFilesOptions({ paths, maxKib: more.maxKib ?? 1024, showSecrets: more.showSecrets ?? false })),
      NO_ENGINE,
    );
    collectors.push(calls);
    return calls;
  };
  let files: CollectorCalls<FilesCollector>;

  beforeAll(() => {
    mkdirSync(join(app, 'conf.d'), { recursive: true });
    mkdirSync(join(root, 'secret'));
    writeFileSync(
      join(app, 'app.conf'),
      ['# app', 'listen = 8080', 'db_password = hunter2', 'url = postgres://app:s3cret@db/app', 'workers = 4', ''].join('\n'),
    );
    writeFileSync(join(app, 'conf.d', 'site.conf'), 'server_name example.org;\n');
    writeFileSync(join(app, '.htpasswd'), 'admin:$apr1$x$y\n');
    writeFileSync(join(root, 'secret', 'shadow'), 'root:$6$hash:19000:0:99999:7:::\n');
    writeFileSync(join(app, 'binary.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02]));
    writeFileSync(join(app, 'key.pem'), ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEA', 'q1w2e3r4', '-----END RSA PRIVATE KEY-----', ''].join('\n'));
    // 3 MiB of numbered lines: past a 1 MiB cap.
    writeFileSync(join(app, 'huge.log'), Array.from({ length: 300_000 }, (_, i) => `line ${String(i + 1).padStart(6, '0')}`).join('\n'));
    symlinkSync(join(root, 'secret', 'shadow'), join(app, 'link-out'));
    symlinkSync(join(app, 'app.conf'), join(app, 'link-in'));
    symlinkSync(join(app, 'loop-b'), join(app, 'loop-a'));
    symlinkSync(join(app, 'loop-a'), join(app, 'loop-b'));
    symlinkSync(join(root, 'etc'), join(root, 'alias'));
    execFileSync('mkfifo', [join(app, 'pipe')]);
    mkdirSync(join(root, 'wide'));
    writeFileSync(join(root, 'wide', 'long-line.txt'), `short\n${'x'.repeat(10_000)}\nend\n`);
    writeFileSync(join(root, 'wide', 'wide.txt'), `${'y'.repeat(1000)}\n`.repeat(100));
    files = allowing([`${app}/**`]);
  });
  afterAll(async () => {
    for (const calls of collectors) await calls.stop();
    temp.remove();
  });

  it('reads an allowed file line by line, with values that look like secrets redacted and counted', async () => {
    const answer = await files.call(fileRead, { path: join(app, 'app.conf') });
    expect(answer.errors).toEqual([]);
    expect(answer.payload).toMatchObject({
      path: join(app, 'app.conf'),
      real_path: join(app, 'app.conf'),
      next_line: null,
      redacted: 2,
      lines: [
        { n: 1, text: '# app' },
        { n: 2, text: 'listen = 8080' },
        { n: 3, text: 'db_password = [redacted]' },
        { n: 4, text: 'url = postgres://app:[redacted]@db/app' },
        { n: 5, text: 'workers = 4' },
      ],
    });
    expect(JSON.stringify(answer.payload)).not.toMatch(/hunter2|s3cret/);
    const pem = await files.call(fileRead, { path: join(app, 'key.pem'), from_line: 2, lines: 1 });
    expect(pem.payload).toMatchObject({ lines: [{ n: 2, text: '[redacted]' }], next_line: 3 });
  });

  it('shows secrets as they are where the operator turned redaction off, and says so in its facts', async () => {
    const shown = allowing([`${app}/*.conf`], { showSecrets: true });
    expect((await shown.call(fileRead, { path: join(app, 'app.conf') })).payload).toMatchObject({
      redacted: 0,
      lines: expect.arrayContaining([{ n: 3, text: 'db_password = hunter2' }]),
    });
    expect(shown.collector.facts()).toEqual({ file_secrets_shown: true });
    expect(files.collector.facts()).toEqual({});
  });

  it('pages through a file with from_line and lines, next_line saying where to go on', async () => {
    const first = await files.call(fileRead, { path: join(app, 'huge.log'), lines: 3 });
    expect(first.payload).toMatchObject({ lines: [{ n: 1, text: 'line 000001' }, { n: 2 }, { n: 3 }], next_line: 4 });
    const later = await files.call(fileRead, { path: join(app, 'huge.log'), from_line: 50_000, lines: 2 });
    expect(later.payload).toMatchObject({ lines: [{ n: 50_000, text: 'line 050000' }, { n: 50_001 }], next_line: 50_002 });
  });

  it('cuts a very long line, and ends a page at 32 KiB of text with the line to go on from', async () => {
    const wide = allowing([`${root}/wide/*`]);
    const long = await wide.call(fileRead, { path: join(root, 'wide', 'long-line.txt') });
    expect(long.payload?.lines.map((line) => line.text.length)).toEqual([5, 4097, 3]);
    expect(long.payload?.truncated_reason).toBe('1 line longer than 4096 characters cut');
    const page = await wide.call(fileRead, { path: join(root, 'wide', 'wide.txt'), lines: 2000 });
    expect(page.payload?.lines).toHaveLength(33);
    expect(page.payload).toMatchObject({ next_line: 34, truncated_reason: 'a page holds at most 32768 characters of lines: call again with from_line 34' });
  });

  it('reads no further into a huge file than the operator allows, and says where it stopped', async () => {
    const capped = allowing([`${app}/**`], { maxKib: 1024 });
    const past = await capped.call(fileRead, { path: join(app, 'huge.log'), from_line: 200_000, lines: 5 });
    expect(past.errors).toEqual([]);
    expect(past.payload?.lines).toEqual([]);
    expect(past.payload?.next_line).toBeNull();
    // 12 bytes a line: the first 1 MiB holds 87,381 whole lines, and the one cut there is not shown.
    expect(past.payload?.truncated_reason).toBe(
      'the file is 3599999 bytes; this host reads no more than its first 1048576 bytes (--file-max-kib), ending at line 87381',
    );
    expect(past.payload?.size_bytes).toBe(3_599_999);
  });

  it('refuses a path whose .. leads out of the globs, before looking at the disk', async () => {
    const outward = `${app}/../../secret/shadow`;
    const answer = await files.call(fileRead, { path: outward });
    expect(answer.payload).toBeNull();
    expect(answer.errors).toEqual([expect.objectContaining({ code: 'forbidden', message: `"${outward}" is outside the paths this host allows` })]);
    expect(answer.errors[0]?.hint).toContain(`${app}/**`);
    // What exists out there and what does not are refused alike.
    const missing = await files.call(fileRead, { path: `${app}/../../secret/nothing` });
    expect(missing.errors[0]?.message).toBe(`"${app}/../../secret/nothing" is outside the paths this host allows`);
  });

  it('refuses a symlink that leads out of the globs, naming where it leads, and follows one that stays inside', async () => {
    const out = await files.call(fileStat, { path: join(app, 'link-out') });
    expect(out.errors).toEqual([
      expect.objectContaining({
        code: 'forbidden',
        message: `"${join(app, 'link-out')}" resolves to ${join(root, 'secret', 'shadow')}, outside the paths this host allows`,
      }),
    ]);
    const inside = await files.call(fileRead, { path: join(app, 'link-in'), lines: 1 });
    expect(inside.payload).toMatchObject({ path: join(app, 'link-in'), real_path: join(app, 'app.conf'), lines: [{ n: 1, text: '# app' }] });
  });

  it('matches a glob through a symlinked directory at where that directory really is', async () => {
    const aliased = allowing([`${root}/alias/app/*.conf`]);
    expect((await aliased.call(fileStat, { path: `${root}/alias/app/app.conf` })).payload).toMatchObject({ real_path: join(app, 'app.conf'), type: 'file' });
    expect((await aliased.call(fileStat, { path: join(app, 'app.conf') })).errors[0]?.code).toBe('forbidden');
  });

  it('answers a symlink loop, a missing file, a binary file, a FIFO, a directory and a relative path each with its own error', async () => {
    const codes = async (action: typeof fileRead | typeof fileStat, path: string) =>
      (await files.call(action, { path })).errors.map((e) => [e.code, e.message]);
    expect(await codes(fileRead, join(app, 'loop-a'))).toEqual([
      ['invalid_argument', `${join(app, 'loop-a')} cannot be resolved: its symlinks lead in a loop`],
    ]);
    expect(await codes(fileRead, join(app, 'absent.conf'))).toEqual([['not_found', `no file or directory ${join(app, 'absent.conf')} on this host`]]);
    expect(await codes(fileRead, join(app, 'binary.bin'))).toEqual([
      ['unsupported', `${join(app, 'binary.bin')} is binary (a NUL byte at offset 4): file_read shows text only`],
    ]);
    expect(await codes(fileRead, join(app, 'pipe'))).toEqual([['unsupported', `${join(app, 'pipe')} is not a regular file (a device, FIFO or socket)`]]);
    expect(await codes(fileRead, join(app, 'conf.d'))).toEqual([['invalid_argument', `${join(app, 'conf.d')} is a directory`]]);
    expect(await codes(fileRead, 'etc/app/app.conf')).toEqual([['invalid_argument', '"etc/app/app.conf" is not an absolute path']]);
    expect(await codes(fileRead, join(app, '.htpasswd'))).toEqual([['forbidden', `"${join(app, '.htpasswd')}" is outside the paths this host allows`]]);
  });

  it("states a file's type, size, mode, owner and whether it is text, and lists a directory's allowed entries", async () => {
    const stat = await files.call(fileStat, { path: join(app, 'binary.bin') });
    expect(stat.payload).toMatchObject({ type: 'file', size_bytes: 7, mode: '0644', uid: 0, user: 'root', text: false });
    expect((await files.call(fileStat, { path: join(app, 'app.conf') })).payload?.text).toBe(true);
    const dir = await files.call(fileStat, { path: `${app}/` });
    expect(dir.payload).toMatchObject({ path: `${app}/`, real_path: app, type: 'directory', text: null, entry_count: 10 });
    // .htpasswd is no entry of the globs; a symlink is listed as one, wherever it leads.
    expect(dir.payload?.entries?.map((entry) => [entry.name, entry.type])).toEqual([
      ['app.conf', 'file'],
      ['binary.bin', 'file'],
      ['conf.d', 'directory'],
      ['huge.log', 'file'],
      ['key.pem', 'file'],
      ['link-in', 'symlink'],
      ['link-out', 'symlink'],
      ['loop-a', 'symlink'],
      ['loop-b', 'symlink'],
      ['pipe', 'other'],
    ]);
  });

  it('says how to allow paths when the operator gave none', async () => {
    const none = allowing([]);
    expect(await none.collector.probe()).toMatchObject({ available: false, reason: expect.stringContaining('--file-paths') });
    const answer = await none.call(fileRead, { path: '/etc/hostname' });
    expect(answer.errors).toEqual([
      expect.objectContaining({
        code: 'collector_unavailable',
        message: expect.stringMatching(/^no --file-paths given: this agent reads no files \(start it with --file-paths/),
      }),
    ]);
  });
});

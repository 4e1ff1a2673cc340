import { appendFileSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { logTail } from '../../../shared/domains/logs/log-actions.ts';
import { silentLogger } from '../../../shared/log/logger.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { LogsCollector } from './logs-collector.ts';

describe('log_tail reads only the log files the host’s operator allows', () => {
  const stops: (() => unknown)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  function setup() {
    const temp = makeTempDir('fm-logs-');
    stops.push(() => temp.remove());
    const logs = join(temp.path, 'log');
    const secrets = join(temp.path, 'etc');
    mkdirSync(logs);
    mkdirSync(secrets);
    writeFileSync(join(secrets, 'shadow'), 'root:secret\n');
    symlinkSync(join(secrets, 'shadow'), join(logs, 'shadow.log'));
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i + 1}${i % 100 === 0 ? ' ERROR' : ''}`);
    writeFileSync(join(logs, 'app.log'), `${lines.join('\n')}\n`);
    const calls = new CollectorCalls(() => new LogsCollector({ logPaths: [`${logs}/*.log`] }, silentLogger), {} as EngineClient);
    stops.push(() => calls.stop());
    return { calls, logs, secrets };
  }

  it('answers a file’s last lines, oldest first, and the last ones that contain a text', async () => {
    const { calls, logs } = setup();
    const tail = await calls.call(logTail, { path: join(logs, 'app.log'), lines: 3 });
    expect(tail.errors).toEqual([]);
    expect(tail.payload).toMatchObject({ path: join(logs, 'app.log'), count: 3, truncated: false });
    expect(tail.payload?.lines.map((line) => line.text)).toEqual(['line 298', 'line 299', 'line 300']);
    const errors = await calls.call(logTail, { path: join(logs, 'app.log'), contains: 'ERROR' });
    expect(errors.payload?.lines.map((line) => line.text)).toEqual(['line 1 ERROR', 'line 101 ERROR', 'line 201 ERROR']);
  });

  it('reads a long file backwards across chunks, joining a character split between them', async () => {
    const { calls, logs } = setup();
    // Lines of 999 characters of three bytes each: chunk boundaries fall inside characters.
    const wide = Array.from({ length: 400 }, (_, i) => `${i}:${'€'.repeat(999)}`);
    writeFileSync(join(logs, 'wide.log'), wide.join('\n'));
    const answer = await calls.call(logTail, { path: join(logs, 'wide.log'), lines: 200 });
    expect(answer.payload?.lines.map((line) => line.text)).toEqual(wide.slice(200));
  });

  it('refuses a path outside the globs, a link out of them and a .. escape, without telling whether the file exists', async () => {
    const { calls, logs, secrets } = setup();
    for (const path of [join(secrets, 'shadow'), join(logs, 'shadow.log'), `${logs}/../etc/shadow`, join(secrets, 'no-such-file')]) {
      const answer = await calls.call(logTail, { path });
      expect(answer.payload).toBeNull();
      expect(answer.errors[0], path).toMatchObject({ code: 'forbidden', message: expect.stringContaining('--log-paths') });
    }
    const link = await calls.call(logTail, { path: join(logs, 'shadow.log') });
    expect(link.errors[0]?.message).toContain(`resolves to ${join(secrets, 'shadow')}`);
    const missing = await calls.call(logTail, { path: join(logs, 'gone.log') });
    expect(missing.errors[0]?.code).toBe('not_found');
    expect((await calls.call(logTail, { path: 'log/app.log' })).errors[0]?.code).toBe('invalid_argument');
  });

  it('follows a file, sending the lines added as progress and answering them with the tail', async () => {
    const { calls, logs } = setup();
    const path = join(logs, 'app.log');
    const following = calls.call(logTail, { path, lines: 2, follow_ms: 1500 });
    setTimeout(() => appendFileSync(path, 'fresh one\nfresh two\n'), 300);
    const answer = await following;
    expect(answer.payload?.lines.map((line) => line.text)).toEqual(['fresh one', 'fresh two']);
    expect(answer.chunks).toEqual([{ path, lines: [{ text: 'fresh one' }, { text: 'fresh two' }] }]);
  });

  it('follows a file renamed away by its rotation: the old file to its end, then the new one from its start', async () => {
    const { calls, logs } = setup();
    const path = join(logs, 'app.log');
    const following = calls.call(logTail, { path, lines: 10, follow_ms: 2500 });
    setTimeout(() => {
      appendFileSync(path, 'before rotation\nlast of the old');
      renameSync(path, join(logs, 'app.log.1'));
      appendFileSync(join(logs, 'app.log.1'), ' file\n');
    }, 300);
    setTimeout(() => writeFileSync(path, 'first of the new file\n'), 900);
    setTimeout(() => appendFileSync(path, 'second of the new file\n'), 1500);
    const answer = await following;
    expect(answer.errors).toEqual([]);
    const fresh = ['before rotation', 'last of the old file', 'first of the new file', 'second of the new file'];
    expect(answer.payload?.lines.map((line) => line.text)).toEqual(['line 295', 'line 296', 'line 297', 'line 298', 'line 299', 'line 300', ...fresh]);
    expect((answer.chunks as { lines: { text: string }[] }[]).flatMap((chunk) => chunk.lines.map((line) => line.text))).toEqual(fresh);
    expect(answer.payload?.size_bytes).toBe('first of the new file\nsecond of the new file\n'.length);
  });

  it('does not follow a rotation out of the globs: a link put at the path is not read', async () => {
    const { calls, logs, secrets } = setup();
    const path = join(logs, 'app.log');
    const following = calls.call(logTail, { path, lines: 1, follow_ms: 1500 });
    setTimeout(() => {
      renameSync(path, join(logs, 'app.log.1'));
      symlinkSync(join(secrets, 'shadow'), path);
    }, 300);
    const answer = await following;
    expect(answer.payload?.lines.map((line) => line.text)).toEqual(['line 300']);
    expect(JSON.stringify(answer)).not.toContain('secret');
  });

  it('is unavailable, saying how to allow files, when the operator allowed none', async () => {
    const collector = new LogsCollector({ logPaths: [] }, silentLogger);
    expect(await collector.probe()).toMatchObject({ available: false, reason: expect.stringContaining('--log-paths') });
  });
});

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import { holdsJournal, JournalReader, journalctlArgs } from './journal-reader.ts';

describe('the journal reader', () => {
  const temps: { remove(): void }[] = [];
  afterEach(() => {
    for (const temp of temps.splice(0)) temp.remove();
  });

  it('passes each filter to journalctl as one argument, newest first, in the mounted directory when there is one', () => {
    const args = journalctlArgs(
      { journalctl: 'journalctl', journalDir: '/host/journal' },
      { unit: 'nginx', priority: 'warning', sinceUnixS: 100.7, untilUnixS: 200.2, grep: 'a b; rm -rf /', boot: -1, olderThan: 's=1;i=2' },
      51,
    );
    expect(args).toEqual(
      expect.arrayContaining([
        '--output=json',
        '--reverse',
        '--directory=/host/journal',
        '--lines=51',
        '--unit=nginx',
        '--priority=4',
        '--since=@100',
        '--until=@201',
        '--grep=a b; rm -rf /',
        '--boot=-1',
        '--after-cursor=s=1;i=2',
      ]),
    );
    expect(journalctlArgs({ journalctl: 'journalctl', journalDir: undefined }, {}, undefined).some((arg) => arg.startsWith('--directory'))).toBe(false);
  });

  it('tells a folder with journal files, its own or a machine’s, from an empty one, and says why there is no journal', async () => {
    const temp = makeTempDir('fm-journal-');
    temps.push(temp);
    const empty = join(temp.path, 'empty');
    const machine = join(temp.path, 'journal', '0123456789abcdef');
    mkdirSync(empty);
    mkdirSync(machine, { recursive: true });
    writeFileSync(join(machine, 'system.journal'), '');
    expect(holdsJournal(empty)).toBe(false);
    expect(holdsJournal(join(temp.path, 'journal'))).toBe(true);
    const absent = new JournalReader({ journalctl: 'journalctl', journalDir: empty });
    expect(absent.absence()).toContain('holds no journal files');
    await expect(absent.read({}, 1, new AbortController().signal, () => true)).rejects.toMatchObject({ code: 'collector_unavailable' });
    expect(new JournalReader({ journalctl: 'journalctl', journalDir: join(temp.path, 'journal') }).absence()).toBeUndefined();
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import { readStanzas } from './control-stanzas.ts';

describe('reading a file of control stanzas', () => {
  const temp = makeTempDir('fm-stanzas-');
  afterAll(() => temp.remove());

  const read = async (text: string, wanted = ['Package', 'Version', 'Status']) => {
    const path = join(temp.path, `status-${Math.random().toString(36).slice(2)}`);
    writeFileSync(path, text);
    const stanzas: Record<string, string>[] = [];
    await readStanzas(path, wanted, (fields) => stanzas.push(fields));
    return stanzas;
  };

  it('hands each stanza its wanted single-line fields, skipping continuation lines, CRLF or not, last line unterminated', async () => {
    const text = [
      'Package: adduser',
      'Status: install ok installed',
      'Priority: important',
      'Version: 3.134',
      'Description: add and remove users',
      ' Package: not a field, a continuation line',
      '\tVersion: nor this',
      '',
      'Package: apt\r',
      'Version: 2.6.1\r',
      '\r',
      '',
      'Package: bash',
      'Version: 5.2.15-2+b7',
    ].join('\n');
    expect(await read(text)).toEqual([
      { Package: 'adduser', Status: 'install ok installed', Version: '3.134' },
      { Package: 'apt', Version: '2.6.1' },
      { Package: 'bash', Version: '5.2.15-2+b7' },
    ]);
  });

  it('reads a file far larger than one piece of the stream, a stanza split anywhere between pieces', async () => {
    const stanzas = Array.from({ length: 5000 }, (_, n) => `Package: pkg-${n}\nVersion: 1.${n}\nDescription: ${'x'.repeat(n % 97)}\n`);
    const found = await read(stanzas.join('\n'), ['Package', 'Version']);
    expect(found).toHaveLength(5000);
    expect(found[4321]).toEqual({ Package: 'pkg-4321', Version: '1.4321' });
    expect(found.every((fields, n) => fields.Package === `pkg-${n}` && fields.Version === `1.${n}`)).toBe(true);
  });
});

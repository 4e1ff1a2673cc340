import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { xmlElements } from './xml-elements.ts';

async function collect(chunks: string[], tag: string): Promise<string[]> {
  const found: string[] = [];
  await xmlElements(Readable.from(chunks), tag, (element) => found.push(element));
  return found;
}

describe('xmlElements', () => {
  const primary = [
    '<metadata packages="2">\n<package type="rpm"><name>bash</name><packager>x</packager></package>\n',
    '<package type="rpm"><name>openssl</name><packager/></package>\n</metadata>\n',
  ].join('');

  it('gives each element whole, whatever the chunks cut, and takes <packager> for no <package>', async () => {
    const whole = ['<package type="rpm"><name>bash</name><packager>x</packager></package>', '<package type="rpm"><name>openssl</name><packager/></package>'];
    expect(await collect([primary], 'package')).toEqual(whole);
    for (const size of [1, 3, 7, 16]) {
      const chunks = primary.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
      expect(await collect(chunks, 'package')).toEqual(whole);
    }
  });

  it('takes <updates> and <updated> for no <update>', async () => {
    const notes = '<updates><update type="security"><updated date="1"/><id>A</id></update><update type="bugfix"><id>B</id></update></updates>';
    expect(await collect([notes.slice(0, 20), notes.slice(20)], 'update')).toEqual([
      '<update type="security"><updated date="1"/><id>A</id></update>',
      '<update type="bugfix"><id>B</id></update>',
    ]);
  });
});

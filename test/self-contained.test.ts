import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** A relative path written in a file: one or more `../` then a name (not part of a longer word or URL). */
const RELATIVE_PATH = /(?<![\w./-])((?:\.\.\/)+)[\w.-]+/g;

describe('the repository is self-contained', () => {
  it('no tracked file names a path outside the checkout', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    const escapes: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(join(ROOT, file), 'utf8');
      } catch {
        continue; // listed but deleted in the work tree
      }
      if (text.includes('\0')) continue;
      for (const [index, line] of text.split('\n').entries()) {
        for (const match of line.matchAll(RELATIVE_PATH)) {
          const target = resolve(ROOT, dirname(file), match[0]);
          if (target !== ROOT && !target.startsWith(`${ROOT}${sep}`)) escapes.push(`${file}:${index + 1}: ${match[0]}`);
        }
      }
    }
    expect(escapes, 'paths that leave the repository (a fresh clone has nothing beside it)').toEqual([]);
  });
});

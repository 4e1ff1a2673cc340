import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DOMAINS } from '../shared/domains/domains.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

function sourcesUnder(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((entry) => {
    const path = `${dir}/${entry}`;
    if (statSync(join(root, path)).isDirectory()) return sourcesUnder(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.gen.ts') ? [path] : [];
  });
}

/**
 * The places of the broker and the agent that belong to one domain
 * (docs/domains.md): its collector folder and its broker half; the agent's own
 * actions (`agent/actions/`) are the agent domain's handlers.
 */
function ownerOf(path: string): string | undefined {
  if (path.startsWith('agent/actions/')) return 'agent';
  return /^(?:agent\/collectors|broker\/domains)\/([a-z0-9-]+)\//.exec(path)?.[1];
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('generic broker and agent code', () => {
  it("names no domain's action ids or report kinds: it reads the declarations", () => {
    const names = DOMAINS.flatMap((domain) => [
      ...domain.actions.map((action) => ({ domain: domain.name, name: action.id })),
      ...Object.keys(domain.reports).map((kind) => ({ domain: domain.name, name: kind })),
    ]);
    const patterns = names.map((entry) => ({ ...entry, pattern: new RegExp(`(?<![\\w.-])${literal(entry.name)}(?![\\w-])`) }));
    const found: string[] = [];
    let owned = 0;
    for (const file of [...sourcesUnder('broker'), ...sourcesUnder('agent')]) {
      const text = readFileSync(join(root, file), 'utf8');
      const owner = ownerOf(file);
      for (const { domain, name, pattern } of patterns) {
        if (!pattern.test(text)) continue;
        if (domain === owner) owned++;
        else found.push(`${file} names ${name} (${domain})`);
      }
    }
    expect(found).toEqual([]);
    // The names are found where they belong (a collector sends its report kinds): the check does look.
    expect(owned).toBeGreaterThan(0);
  });
});

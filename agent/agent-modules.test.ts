import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

describe("the agent's modules", () => {
  // Node 24 builds an imported built-in's namespace from every export, lazy getters included: an ES import of
  // node:http loads undici, web streams and assert (11 MiB of an idle agent). On Node 20 the check holds either way.
  it('do not load undici, which the agent never uses', () => {
    const script = "await import('./agent/agent.ts'); process.stdout.write(JSON.stringify(process.moduleLoadList));";
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    const loaded = (JSON.parse(output) as string[]).filter((name) => name.startsWith('NativeModule '));
    expect(loaded.length).toBeGreaterThan(50);
    expect(loaded.filter((name) => name.includes('undici'))).toEqual([]);
  });
});

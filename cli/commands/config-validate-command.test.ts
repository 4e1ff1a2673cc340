import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli.ts';

describe('fleetmesh config validate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetmesh-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function validate(...args: string[]): Promise<{ code: number; out: string }> {
    let out = '';
    const code = await runCli(['config', 'validate', ...args], { stdout: (text) => (out += text), stderr: (text) => (out += text), env: {} });
    return { code, out };
  }

  it("names every problem of a broker's config file with its line, and the key it probably meant", async () => {
    const file = join(dir, 'broker.yaml');
    writeFileSync(file, 'grpc-listen: 0.0.0.0:7443\nmcp_listn: 127.0.0.1:7400\noperations-level: high\n');
    const { code, out } = await validate('broker', file);
    expect(code).toBe(1);
    expect(out).toContain(`${file}:2: error: "mcp_listn" is not an option of this program (did you mean mcp-listen?) (unknown_key)`);
    expect(out).toContain(`${file}:3: error: operations-level must be a whole number, not "high" (wrong_type)`);
    expect(out).toContain(`${file}: not valid (2 errors, 0 warnings)`);
  });

  it('passes a good agent file, and fails it on a warning with --strict', async () => {
    const secret = join(dir, 'token');
    writeFileSync(secret, 'fm1.a.b', { mode: 0o644 });
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, `log-level: debug\ntoken-file: ${secret}\n`);
    expect((await validate('agent', file)).code).toBe(0);
    const strict = await validate('agent', file, '--strict');
    expect(strict.code).toBe(1);
    expect(strict.out).toContain(`${file}:2: warning: ${secret} is readable by every user (mode 644) (loose_file_mode)`);
  });
});

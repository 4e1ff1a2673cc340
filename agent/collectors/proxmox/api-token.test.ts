import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { parseApiToken, readApiToken } from './api-token.ts';

const SECRET = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tokenFile(content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fm-token-'));
  dirs.push(dir);
  const path = join(dir, 'pve.token');
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

describe('API tokens', () => {
  it('reads USER@REALM!TOKENID=SECRET and builds the PVEAPIToken header from it', () => {
    const token = readApiToken(tokenFile(`fleetmesh@pve!read=${SECRET}\n`), '--proxmox-token-file');
    expect(token.id).toBe('fleetmesh@pve!read');
    expect(token.authorization()).toBe(`PVEAPIToken=fleetmesh@pve!read=${SECRET}`);
  });

  it('keeps the secret out of strings, JSON and error messages', () => {
    const token = parseApiToken(`root@pam!fleet=${SECRET}`, 'test');
    expect(String(token)).toBe('root@pam!fleet');
    expect(JSON.stringify({ token })).toBe('{"token":"root@pam!fleet"}');
    expect(token.redact(`echo ${SECRET} back`)).toBe('echo <secret> back');
    for (const content of [SECRET, `root@pam=${SECRET}`, `root@pam!fleet ${SECRET}`, `root@pam!fleet=${SECRET}\nsecond line`]) {
      let failure: unknown;
      try {
        parseApiToken(content, 'the token file');
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(FleetError);
      expect((failure as FleetError).message).toBe('proxmox (configuration): the token file does not hold one line USER@REALM!TOKENID=SECRET');
      expect(JSON.stringify((failure as FleetError).toInfo())).not.toContain(SECRET);
    }
  });

  it('says which file is missing, as a configuration failure', () => {
    expect(() => readApiToken('/nonexistent/pve.token', '--proxmox-token-file')).toThrow(
      'proxmox (configuration): the token file /nonexistent/pve.token (--proxmox-token-file) does not exist',
    );
  });
});

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../shared/options/command-line.ts';
import { AGENT_COMMAND, resolveAgentOptions } from './agent-options.ts';

function agentOptions(argv: string[], env: NodeJS.ProcessEnv = {}) {
  return resolveAgentOptions(parseCommandLine(AGENT_COMMAND, argv, env).values);
}

describe("the host's /proc option", () => {
  const dir = mkdtempSync(join(tmpdir(), 'fm-host-proc-'));
  const hostProc = join(dir, 'proc');
  mkdirSync(join(hostProc, '1'), { recursive: true });
  writeFileSync(join(hostProc, '1', 'stat'), '1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0\n');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes a mounted proc tree from the flag or FLEETMESH_HOST_PROC', () => {
    expect(agentOptions(['--host-proc', hostProc]).hostProc).toBe(hostProc);
    expect(agentOptions([], { FLEETMESH_HOST_PROC: hostProc }).hostProc).toBe(hostProc);
  });

  it('stops the agent at start when the directory is not a proc tree', () => {
    expect(() => agentOptions(['--host-proc', dir])).toThrow(/--host-proc .* is not a proc filesystem/);
  });

  it('uses /host/proc when it is mounted and nothing names another, else the own /proc', () => {
    expect(agentOptions([]).hostProc).toBe(existsSync('/host/proc/1/stat') ? '/host/proc' : undefined);
  });
});

describe('the backup and app catalog options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fm-agent-dirs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps backups in the data dir unless --backup-dir names another place', () => {
    expect(agentOptions(['--data-dir', join(dir, 'agent')]).backupDir).toBe(join(dir, 'agent', 'backups'));
    expect(agentOptions(['--backup-dir', join(dir, 'elsewhere')]).backupDir).toBe(join(dir, 'elsewhere'));
  });

  it('takes an app catalog folder, and stops the agent at start when it is not one', () => {
    expect(agentOptions(['--app-catalog', dir]).appCatalogDir).toBe(dir);
    expect(agentOptions([]).appCatalogDir).toBeUndefined();
    expect(() => agentOptions(['--app-catalog', join(dir, 'missing')])).toThrow(/--app-catalog .* is not a directory/);
  });
});

describe("a domain's resolved flags", () => {
  const PIN = 'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89';

  it('leave the Proxmox VE collector unconfigured when no flag asks for it', () => {
    expect(agentOptions([]).domainOptions?.proxmox).toBeUndefined();
  });

  it('are resolved with the agent options, defaulting the Proxmox VE endpoint to the local API and the timeout to 10 s', () => {
    const options = agentOptions(['--proxmox-token-file', '/etc/fleetmesh/pve.token', '--proxmox-fingerprint', PIN]);
    expect(options.domainOptions?.proxmox).toEqual({
      endpoint: 'https://127.0.0.1:8006',
      tokenFile: '/etc/fleetmesh/pve.token',
      actionTokenFile: undefined,
      trust: { kind: 'fingerprint', sha256Hex: 'abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789' },
      timeoutMs: 10_000,
      maxResponseBytes: 8 * 1024 * 1024,
      inventoryIntervalMs: 60_000,
    });
    const fromEnv = agentOptions([], {
      FLEETMESH_PROXMOX_ENDPOINT: 'https://pve.example.com:8006/api2/json',
      FLEETMESH_PROXMOX_TOKEN_FILE: '/t',
      FLEETMESH_PROXMOX_ACTION_TOKEN_FILE: '/a',
      FLEETMESH_PROXMOX_INSECURE: 'true',
    });
    expect(fromEnv.domainOptions?.proxmox).toMatchObject({ endpoint: 'https://pve.example.com:8006', actionTokenFile: '/a', trust: { kind: 'insecure' } });
  });

  it('stop the agent at start with one line when Proxmox VE flags cannot work together', () => {
    expect(() => agentOptions(['--proxmox-insecure', '--proxmox-ca-file', '/ca.pem', '--proxmox-token-file', '/t'])).toThrow(
      '--proxmox-ca-file and --proxmox-insecure exclude each other',
    );
  });
});

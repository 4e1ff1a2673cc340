import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../shared/options/command-line.ts';
import { AGENT_COMMAND, resolveAgentOptions } from '../../agent-options.ts';
import { type ProxmoxFlagValues, resolveProxmoxOptions } from './proxmox-options.ts';

const PIN = 'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89';
const none: ProxmoxFlagValues = {
  endpoint: undefined,
  tokenFile: undefined,
  actionTokenFile: undefined,
  fingerprint: undefined,
  caFile: undefined,
  insecure: false,
};

function agentOptions(argv: string[], env: NodeJS.ProcessEnv = {}) {
  return resolveAgentOptions(parseCommandLine(AGENT_COMMAND, argv, env).values);
}

describe('proxmox options', () => {
  it('leaves the collector unconfigured when no flag asks for it', () => {
    expect(resolveProxmoxOptions(none)).toBeUndefined();
    expect(agentOptions([]).proxmox).toBeUndefined();
  });

  it('resolves the agent flags, defaulting the endpoint to the local API and the timeout to 10 s', () => {
    const options = agentOptions(['--proxmox-token-file', '/etc/fleetmesh/pve.token', '--proxmox-fingerprint', PIN]);
    expect(options.proxmox).toEqual({
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
    expect(fromEnv.proxmox).toMatchObject({ endpoint: 'https://pve.example.com:8006', actionTokenFile: '/a', trust: { kind: 'insecure' } });
    expect(resolveProxmoxOptions({ ...none, tokenFile: '/t', caFile: '/ca.pem' })?.trust).toEqual({ kind: 'ca', caFile: '/ca.pem' });
    expect(resolveProxmoxOptions({ ...none, tokenFile: '/t' })?.trust).toEqual({ kind: 'system' });
    expect(resolveProxmoxOptions({ ...none, tokenFile: '/t', fingerprint: `sha256:${'0'.repeat(64)}` })?.trust).toEqual({
      kind: 'fingerprint',
      sha256Hex: '0'.repeat(64),
    });
  });

  it('refuses flags that cannot work together, with one line naming them', () => {
    expect(() => resolveProxmoxOptions({ ...none, endpoint: 'https://pve:8006' })).toThrow('--proxmox-endpoint needs --proxmox-token-file');
    expect(() => resolveProxmoxOptions({ ...none, insecure: true })).toThrow('--proxmox-insecure given without --proxmox-token-file');
    expect(() => resolveProxmoxOptions({ ...none, tokenFile: '/t', insecure: true, fingerprint: PIN })).toThrow(
      '--proxmox-fingerprint and --proxmox-insecure exclude each other',
    );
    expect(() => resolveProxmoxOptions({ ...none, tokenFile: '/t', fingerprint: 'AB:CD' })).toThrow('is not a SHA-256 fingerprint');
    expect(() => resolveProxmoxOptions({ ...none, tokenFile: '/t', endpoint: 'http://pve:8006' })).toThrow('must use https');
    expect(() => resolveProxmoxOptions({ ...none, tokenFile: '/t', endpoint: 'https://pve:8006/other' })).toThrow('must be only a scheme, host and port');
    expect(() => agentOptions(['--proxmox-insecure', '--proxmox-ca-file', '/ca.pem', '--proxmox-token-file', '/t'])).toThrow(
      '--proxmox-ca-file and --proxmox-insecure exclude each other',
    );
  });
});

import { describe, expect, it } from 'vitest';
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

describe('proxmox options', () => {
  it('leaves the collector unconfigured when no flag asks for it', () => {
    expect(resolveProxmoxOptions(none)).toBeUndefined();
  });

  it('resolves each way of trusting the API', () => {
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
  });
});

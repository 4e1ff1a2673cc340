import { describe, expect, it } from 'vitest';
import { sealCaKey, unsealCaKey } from './ca-key-seal.ts';

describe('a CA key sealed with the operator secret', () => {
  it('opens with the secret it was sealed with, shows nothing of the key, and refuses another secret', () => {
    const key = '-----BEGIN RSA PRIVATE KEY-----\nMIIEsecret\n-----END RSA PRIVATE KEY-----\n';
    const sealed = sealCaKey(key, 'the right secret, long enough');
    expect(sealed).not.toContain('MIIEsecret');
    expect(sealed).not.toContain('PRIVATE KEY');
    expect(unsealCaKey(sealed, 'the right secret, long enough')).toBe(key);
    expect(() => unsealCaKey(sealed, 'another secret, long enough!')).toThrow(/does not open the CA key/);
  });
});

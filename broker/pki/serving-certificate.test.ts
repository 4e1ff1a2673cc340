import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { certificatePin, createCertificateAuthority, issueServerCertificate } from '../../shared/pki/certificates.ts';
import { CaSet } from './ca-set.ts';
import { ServingCertificate } from './serving-certificate.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function servingWith(failures: FleetError[]) {
  const dir = mkdtempSync(join(tmpdir(), 'fm-serving-'));
  dirs.push(dir);
  const ca = await createCertificateAuthority({ commonName: 'test CA', lifetimeMs: 86_400_000 });
  const pin = certificatePin(ca.certificatePem);
  const set = new CaSet(
    [{ pin, certificatePem: ca.certificatePem, keySealed: null, crossCertificatePem: null, state: 'active', createdAt: 0, retiredAt: null }],
    'standby',
  );
  let asked = 0;
  const serving = new ServingCertificate({
    dataDir: dir,
    names: ['localhost'],
    lifetimeMs: 3_600_000,
    cas: () => set,
    log: silentLogger,
    issue: async (publicKeyPem, names, lifetimeMs) => {
      const failure = failures[asked++];
      if (failure) throw failure;
      return { ...issueServerCertificate(ca, { publicKeyPem, names, lifetimeMs }), caPin: pin };
    },
  });
  return { serving, asked: () => asked };
}

describe("the broker's serving certificate at start", () => {
  it('asks a signer that cannot be reached yet again, and starts once it answers', async () => {
    const { serving, asked } = await servingWith([new FleetError('unavailable', 'broker a, which signs for the cluster, has not been heard on the bus')]);
    const identity = await serving.start();
    serving.stop();
    expect(asked()).toBe(2);
    expect(identity.certificatePem).toContain('BEGIN CERTIFICATE');
  });

  it('fails the start at once on a refusal that asking again would not change', async () => {
    const { serving, asked } = await servingWith([new FleetError('forbidden', 'this broker may not be issued a certificate')]);
    await expect(serving.start()).rejects.toThrow('this broker may not be issued a certificate');
    serving.stop();
    expect(asked()).toBe(1);
  });
});

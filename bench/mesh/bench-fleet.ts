import { readFileSync } from 'node:fs';
import { BrokerAuthority } from '../../broker/pki/broker-authority.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { createKeyPair, type KeyPair, publicKeyFingerprint } from '../../shared/pki/certificates.ts';

interface BenchAgentIdentity {
  agentId: string;
  name: string;
  certificatePem: string;
  notBefore: Date;
  notAfter: Date;
  serial: string;
}

/**
 * Enrolls N simulated agents straight into a broker data dir: one key pair
 * shared by all (key generation is not what is measured), a certificate and a
 * row each, exactly as enrollment would write them.
 */
export async function preEnroll(
  dataDir: string,
  count: number,
  /** A PostgreSQL URL for a cluster's shared store; default: the SQLite file in the data dir. */
  storeUrl?: string,
): Promise<{ keys: KeyPair; caCertificatePem: string; agents: BenchAgentIdentity[] }> {
  const store = await BrokerStore.open(dataDir, { store: storeUrl });
  const authority = await BrokerAuthority.open(dataDir);
  const keys = await createKeyPair();
  const keySha = publicKeyFingerprint(keys.publicKeyPem);
  const agents: BenchAgentIdentity[] = [];
  const now = Date.now();
  await store.transaction(async () => {
    for (let i = 0; i < count; i++) {
      const agentId = `bench${String(i).padStart(6, '0')}`;
      const name = `sim-${String(i).padStart(5, '0')}`;
      const issued = authority.issueAgentCertificate({ publicKeyPem: keys.publicKeyPem, agentId, name, lifetimeMs: 30 * 86_400_000, now });
      await store.agents.insert({ id: agentId, name, tokenLabels: {}, publicKeySha256: keySha, enrolledAt: now, tokenId: 'bench' });
      await store.certificates.insert({
        serial: issued.serial,
        agentId,
        issuedAt: now,
        notBefore: issued.notBefore.getTime(),
        notAfter: issued.notAfter.getTime(),
        publicKeySha256: keySha,
        issuedBy: 'enroll',
        caPin: authority.pin,
      });
      await store.agents.setCertificate(agentId, issued.serial, issued.notAfter.getTime(), keySha);
      agents.push({ agentId, name, certificatePem: issued.certificatePem, notBefore: issued.notBefore, notAfter: issued.notAfter, serial: issued.serial });
    }
  });
  await store.close();
  return { keys, caCertificatePem: authority.ca.certificatePem, agents };
}

/** A fleet preEnroll wrote to a file (JSON) for a simulator process, its dates made dates again. */
export function readEnrolled(file: string): Awaited<ReturnType<typeof preEnroll>> {
  const stored = JSON.parse(readFileSync(file, 'utf8')) as Awaited<ReturnType<typeof preEnroll>>;
  return { ...stored, agents: stored.agents.map((agent) => ({ ...agent, notBefore: new Date(agent.notBefore), notAfter: new Date(agent.notAfter) })) };
}

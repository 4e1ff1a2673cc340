import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { type CertificateAuthority, certificatePin, createCertificateAuthority } from '../../shared/pki/certificates.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { BrokerAuthority, CA_CERT_FILE, CA_KEY_FILE, CA_LIFETIME_MS } from './broker-authority.ts';

const META_CA_CERT = 'ca_certificate_pem';
const META_CA_KEY = 'ca_private_key_pem';

/**
 * The CA of a broker, one for every broker of a shared store: an agent
 * enrolled through one broker is known to all. The CA comes from the operator's
 * files (`--ca-cert-file`, the same on every broker; the store then records
 * only its certificate, to refuse a broker given another one), or from the
 * store, where the first broker puts the CA it has in its data dir or makes.
 * A store of one broker (the SQLite file) keeps nothing: the CA stays in the
 * data dir, as always. Each broker still has a server certificate of its own.
 */
export async function openSharedAuthority(store: BrokerStore, dataDir: string, given: CertificateAuthority | undefined): Promise<BrokerAuthority> {
  if (!store.shared) return BrokerAuthority.open(dataDir, given);
  const ca = await store.transaction(async () => {
    const storedCert = await store.getMeta(META_CA_CERT);
    const storedKey = await store.getMeta(META_CA_KEY);
    if (given) {
      if (storedCert === undefined) await store.setMeta(META_CA_CERT, given.certificatePem);
      else if (certificatePin(storedCert) !== certificatePin(given.certificatePem)) throw anotherCa(certificatePin(storedCert));
      return given;
    }
    if (storedCert !== undefined) {
      if (storedKey === undefined) {
        throw new FleetError('invalid_argument', 'the brokers of this store use a CA from files, and this one was given none', {
          hint: 'Give it the same --ca-cert-file and --ca-key-file as the other brokers.',
        });
      }
      return { certificatePem: storedCert, privateKeyPem: storedKey };
    }
    const onDisk = existsSync(join(dataDir, CA_CERT_FILE)) && existsSync(join(dataDir, CA_KEY_FILE));
    const fresh = onDisk
      ? (await BrokerAuthority.open(dataDir)).ca
      : await createCertificateAuthority({ commonName: `fleetmesh CA ${hostname()}`, lifetimeMs: CA_LIFETIME_MS });
    await store.setMeta(META_CA_CERT, fresh.certificatePem);
    await store.setMeta(META_CA_KEY, fresh.privateKeyPem);
    return fresh;
  });
  return BrokerAuthority.open(dataDir, ca);
}

/** The pin of the CA agents of this broker's store must trust (admin commands print it beside join tokens). */
export async function sharedAuthorityPin(store: BrokerStore, dataDir: string): Promise<string> {
  const stored = store.shared ? await store.getMeta(META_CA_CERT) : undefined;
  return stored === undefined ? BrokerAuthority.pin(dataDir) : certificatePin(stored);
}

function anotherCa(pin: string): FleetError {
  return new FleetError('conflict', `the brokers of this store use another CA (${pin}) than --ca-cert-file`, {
    hint: 'Give every broker of a cluster the same --ca-cert-file and --ca-key-file (fleetmesh bootstrap makes them).',
  });
}

import { createPrivateKey, X509Certificate } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import {
  type CertificateAuthority,
  certificatePin,
  createCertificateAuthority,
  type IssuedCertificate,
  issueAgentCertificate,
  issueServerCertificate,
} from '../../shared/pki/certificates.ts';
import { writeFileAtomic, writePrivateKey } from '../../shared/pki/key-files.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { CaRow } from '../store/certificate-authorities-table.ts';
import { CA_CERT_FILE, CA_KEY_FILE, CA_LIFETIME_MS } from './broker-authority.ts';
import { sealCaKey, unsealCaKey } from './ca-key-seal.ts';
import { CaSet, isRotationPhase, META_ROTATION_PHASE } from './ca-set.ts';

/** How long a broker given only the CA's certificate waits for the store to hold that CA. */
const EXPECTED_CA_WAIT_MS = 120_000;

/** Where a cluster's first broker put the CA before CAs had a table of their own (the key in clear). */
const LEGACY_META_CA_CERT = 'ca_certificate_pem';
const LEGACY_META_CA_KEY = 'ca_private_key_pem';

export interface FleetAuthorityOptions {
  dataDir: string;
  /** The CA the operator gave (`--ca-cert-file`, `--ca-key-file`); its key stays in memory. */
  given: CertificateAuthority | undefined;
  /** The CA key secret (`--ca-key-secret-file`, FLEETMESH_CA_KEY_SECRET): opens and seals keys kept in the store. */
  secret: string | undefined;
  /** The CA's certificate alone (`--ca-cert-file` without its key): the store must hold that CA, and this broker waits for it. */
  expected?: string | undefined;
  log: Logger;
}

/** A certificate this broker issued, with the pin of the CA that signed it. */
export interface SignedCertificate extends IssuedCertificate {
  caPin: string;
}

interface AuthorityEvents {
  /** The phase or the CAs changed (a rotation step, taken by any broker or admin command). */
  changed: [set: CaSet];
}

/** A single broker's file for the key of the CA a rotation brings in (`ca.key` holds the active CA's). */
export const NEXT_CA_KEY_FILE = 'ca-next.key';

/**
 * Keeps a CA's new key: sealed in the store when there is a secret; else, for
 * a single broker, as a file of its data dir (mode 0600); a shared store
 * without a secret cannot keep it at all.
 */
export async function keepCaKey(
  store: Pick<BrokerStore, 'shared'>,
  dataDir: string,
  file: string,
  privateKeyPem: string,
  secret: string | undefined,
): Promise<{ keySealed: string | null }> {
  if (secret !== undefined) return { keySealed: sealCaKey(privateKeyPem, secret) };
  if (store.shared) {
    throw new FleetError('invalid_argument', 'a store shared by brokers keeps a CA key only sealed, and no CA key secret was given', {
      hint: 'Give --ca-key-secret-file FILE (or FLEETMESH_CA_KEY_SECRET), the secret the brokers that may sign are given.',
    });
  }
  writePrivateKey(join(dataDir, file), privateKeyPem);
  return { keySealed: null };
}

/** Whether a private key belongs to a CA certificate. */
function keyFits(privateKeyPem: string, certificatePem: string): boolean {
  try {
    return new X509Certificate(certificatePem).checkPrivateKey(createPrivateKey(privateKeyPem));
  } catch {
    return false;
  }
}

/** The phase and CAs the store holds now. */
export async function readCaSet(store: Pick<BrokerStore, 'authorities' | 'getMeta'>): Promise<CaSet> {
  const phase = await store.getMeta(META_ROTATION_PHASE);
  return new CaSet(await store.authorities.list(), isRotationPhase(phase) ? phase : 'standby');
}

/**
 * The fleet's CAs as this broker sees and uses them: kept in the store (one
 * set for every broker of a cluster), read again when they change, and
 * signing with the key of the CA the phase names when this broker can open it
 * (sealed in the store with the operator's secret; a single broker's data dir
 * files without one; a CA the operator gave as files, in memory). A broker that cannot open it never signs: in a cluster it sends
 * its requests to the broker that can (cluster/signing-service.ts).
 */
export class FleetAuthority extends EventEmitter<AuthorityEvents> {
  private current: CaSet;
  private readonly keys = new Map<string, string>();
  private watcher: NodeJS.Timeout | undefined;

  private constructor(
    private readonly store: BrokerStore,
    private readonly options: FleetAuthorityOptions,
    set: CaSet,
  ) {
    super();
    this.current = set;
    if (options.given) this.keys.set(certificatePin(options.given.certificatePem), options.given.privateKeyPem);
  }

  /**
   * The store's CAs, made on first start: from the CA the operator gave, from
   * where an older version kept it (the data dir's files, or a cluster's
   * store in clear, which is then sealed and removed), or new. A clear key is
   * never written to a shared store.
   */
  static async open(store: BrokerStore, options: FleetAuthorityOptions): Promise<FleetAuthority> {
    if (options.expected !== undefined) await FleetAuthority.awaitExpected(store, options);
    await store.transaction(async () => {
      const rows = await store.authorities.list();
      if (rows.length === 0) await FleetAuthority.firstCa(store, options);
      else if (options.given && !rows.some((row) => row.pin === certificatePin(options.given?.certificatePem ?? ''))) {
        const active = rows.find((row) => row.state === 'active')?.pin ?? 'unknown';
        throw store.shared
          ? new FleetError('conflict', `the brokers of this store use another CA (${active}) than --ca-cert-file`, {
              hint: 'Give every broker of a cluster the same --ca-cert-file and --ca-key-file (fleetmesh bootstrap makes them), or none.',
            })
          : new FleetError('conflict', `the data dir ${options.dataDir} belongs to another CA (${active}) than --ca-cert-file`, {
              hint: 'Start the broker with the CA this data dir was made with, or give it an empty --data-dir (its agents must then enroll again).',
            });
      }
      await FleetAuthority.sealLegacyKey(store, options);
    });
    const authority = new FleetAuthority(store, options, await readCaSet(store));
    // The active CA's certificate stays in the data dir for operators (the file agents may be given).
    writeFileAtomic(join(options.dataDir, CA_CERT_FILE), authority.current.active.certificatePem);
    return authority;
  }

  /** A broker given only the CA's certificate never makes a CA: it waits for the broker that brings the key to put it in the store. */
  private static async awaitExpected(store: BrokerStore, options: FleetAuthorityOptions): Promise<void> {
    const pin = certificatePin(options.expected ?? '');
    const until = Date.now() + EXPECTED_CA_WAIT_MS;
    let told = false;
    for (;;) {
      const rows = await store.authorities.list();
      if (rows.some((row) => row.pin === pin)) return;
      if (rows.length > 0) {
        throw new FleetError('conflict', `the brokers of this store use another CA than --ca-cert-file (${pin})`, {
          hint: 'Give every broker of a cluster the same --ca-cert-file (fleetmesh bootstrap makes it).',
        });
      }
      if (Date.now() > until) {
        throw new FleetError('unavailable', `no broker put the CA of --ca-cert-file (${pin}) in the store within ${EXPECTED_CA_WAIT_MS / 1000} s`, {
          hint: 'Start the broker given --ca-key-file too (with --ca-key-secret-file): it seals the key into the store for the others.',
        });
      }
      if (!told) options.log.info('waiting for the broker given the CA key to put the CA in the store', { ca_pin: pin });
      told = true;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  private static async firstCa(store: BrokerStore, options: FleetAuthorityOptions): Promise<void> {
    const legacyCert = store.shared ? await store.getMeta(LEGACY_META_CA_CERT) : undefined;
    const legacyKey = store.shared ? await store.getMeta(LEGACY_META_CA_KEY) : undefined;
    const certPath = join(options.dataDir, CA_CERT_FILE);
    const keyPath = join(options.dataDir, CA_KEY_FILE);
    const onDisk = !store.shared && existsSync(certPath) && existsSync(keyPath);
    let ca: CertificateAuthority;
    if (options.given) ca = options.given;
    else if (legacyCert !== undefined && legacyKey !== undefined) ca = { certificatePem: legacyCert, privateKeyPem: legacyKey };
    else if (onDisk) ca = { certificatePem: readFileSync(certPath, 'utf8'), privateKeyPem: readFileSync(keyPath, 'utf8') };
    else {
      if (store.shared && options.secret === undefined) {
        throw new FleetError('invalid_argument', 'the first broker of a shared store makes the fleet CA, and its key may be kept there only sealed', {
          hint: 'Give the brokers that may sign --ca-key-secret-file FILE (or FLEETMESH_CA_KEY_SECRET), or give them the CA as files (fleetmesh bootstrap, --ca-cert-file and --ca-key-file).',
        });
      }
      ca = await createCertificateAuthority({ commonName: `fleetmesh CA ${hostname()}`, lifetimeMs: CA_LIFETIME_MS });
    }
    const pin = certificatePin(ca.certificatePem);
    // The operator's files, or the data dir's ca.key, keep the key where it is unless there is a secret to seal it with.
    const keptWhereItIs = (options.given !== undefined || onDisk) && options.secret === undefined;
    const key = keptWhereItIs ? { keySealed: null } : await keepCaKey(store, options.dataDir, CA_KEY_FILE, ca.privateKeyPem, options.secret);
    await store.authorities.insert({ pin, certificatePem: ca.certificatePem, ...key, crossCertificatePem: null, state: 'active', createdAt: Date.now() });
    await store.setMeta(META_ROTATION_PHASE, 'standby');
    await store.certificates.assignUnrecordedTo(pin);
    options.log.info('fleet CA recorded in the store', {
      ca_pin: pin,
      key: key.keySealed ? 'sealed with the CA key secret' : options.given ? 'with the operator' : `in ${CA_KEY_FILE} of the data dir`,
    });
  }

  /** A cluster's store from before: its CA key in clear, sealed now with the secret, or refused. */
  private static async sealLegacyKey(store: BrokerStore, options: FleetAuthorityOptions): Promise<void> {
    if (!store.shared) return;
    const legacyKey = await store.getMeta(LEGACY_META_CA_KEY);
    if (legacyKey === undefined) return;
    if (options.secret === undefined) {
      throw new FleetError('invalid_argument', 'this store holds the fleet CA key in clear, as older brokers kept it', {
        hint: 'Start one broker with --ca-key-secret-file FILE (or FLEETMESH_CA_KEY_SECRET): it seals the key and removes the clear copy.',
      });
    }
    const legacyCert = await store.getMeta(LEGACY_META_CA_CERT);
    const pin = legacyCert ? certificatePin(legacyCert) : undefined;
    const row = (await store.authorities.list()).find((candidate) => candidate.pin === pin);
    if (row && row.keySealed === null) await store.authorities.setSealedKey(row.pin, sealCaKey(legacyKey, options.secret));
    await store.deleteMeta(LEGACY_META_CA_KEY);
    await store.deleteMeta(LEGACY_META_CA_CERT);
  }

  get set(): CaSet {
    return this.current;
  }

  /** The active CA's pin. */
  get pin(): string {
    return this.current.active.pin;
  }

  /** The active CA with its key, for a broker that holds it (a single broker, tests); refused otherwise. */
  get ca(): CertificateAuthority {
    return { certificatePem: this.current.active.certificatePem, privateKeyPem: this.requireKey(this.current.active) };
  }

  /** Whether this broker can sign now: it can open the key of the CA the phase signs with. */
  canSign(): boolean {
    return this.keyOf(this.current.signing()) !== undefined;
  }

  /** A CA's private key, when this broker can open it. */
  keyOf(row: CaRow): string | undefined {
    const known = this.keys.get(row.pin);
    if (known !== undefined) return known;
    const opened =
      row.keySealed !== null && this.options.secret !== undefined
        ? unsealCaKey(row.keySealed, this.options.secret)
        : this.store.shared
          ? undefined
          : dataDirKey(this.options.dataDir, row.certificatePem);
    if (opened !== undefined) this.keys.set(row.pin, opened);
    return opened;
  }

  private requireKey(row: CaRow): string {
    const key = this.keyOf(row);
    if (key === undefined) {
      throw new FleetError('forbidden', `this broker cannot sign with CA ${row.pin}: it holds neither its key nor the secret it is sealed with`, {
        hint: 'Give it --ca-key-secret-file (or FLEETMESH_CA_KEY_SECRET); in a cluster, the broker holding the signer lease signs for the others.',
      });
    }
    return key;
  }

  private signingCa(): { row: CaRow; ca: CertificateAuthority } {
    const row = this.current.signing();
    return { row, ca: { certificatePem: row.certificatePem, privateKeyPem: this.requireKey(row) } };
  }

  issueAgentCertificate(options: { publicKeyPem: string; agentId: string; name: string; lifetimeMs: number; now?: number }): SignedCertificate {
    const { row, ca } = this.signingCa();
    return { ...issueAgentCertificate(ca, options), caPin: row.pin };
  }

  /** A broker's serving certificate, from the CA the phase serves from. */
  issueServerCertificate(options: { publicKeyPem: string; names: string[]; lifetimeMs: number; now?: number }): SignedCertificate {
    const row = this.current.serving();
    return { ...issueServerCertificate({ certificatePem: row.certificatePem, privateKeyPem: this.requireKey(row) }, options), caPin: row.pin };
  }

  /** Reads the phase and CAs again; tells listeners when they changed. */
  async refresh(): Promise<void> {
    const set = await readCaSet(this.store);
    if (set.version === this.current.version) return;
    this.current = set;
    this.options.log.info('fleet CAs changed', { phase: set.phase, trusted: set.trustedPins().join(',') });
    this.emit('changed', set);
  }

  /** Reads the store every `intervalMs` for a rotation step taken elsewhere. */
  watch(intervalMs: number): void {
    this.watcher = setInterval(() => {
      this.refresh().catch((error: unknown) => this.options.log.warn('could not read the fleet CAs', { error: (error as Error).message }));
    }, intervalMs);
    this.watcher.unref();
  }

  stop(): void {
    clearInterval(this.watcher);
  }
}

/** A single broker's CA key for this certificate, from the files of its data dir (`ca.key`, `ca-next.key`). */
export function dataDirKey(dataDir: string, certificatePem: string): string | undefined {
  for (const file of [CA_KEY_FILE, NEXT_CA_KEY_FILE]) {
    const path = join(dataDir, file);
    if (!existsSync(path)) continue;
    const key = readFileSync(path, 'utf8');
    if (keyFits(key, certificatePem)) return key;
  }
  return undefined;
}

/**
 * The CA pins an agent may enroll with now (`token create` prints them): read
 * from the store, or, before any broker started on it, from the CA the first
 * start makes (a single broker's data dir; a shared store needs a broker first).
 */
export async function enrollmentPins(store: BrokerStore, dataDir: string, log: Logger): Promise<string[]> {
  if ((await store.authorities.list()).length > 0) return (await readCaSet(store)).validPins();
  return (await FleetAuthority.open(store, { dataDir, given: undefined, secret: undefined, log })).set.validPins();
}

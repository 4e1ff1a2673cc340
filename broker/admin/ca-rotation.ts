import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { certificatePin, createCertificateAuthority, crossCertify, readCertificate } from '../../shared/pki/certificates.ts';
import { CA_KEY_FILE, CA_LIFETIME_MS } from '../pki/broker-authority.ts';
import { unsealCaKey } from '../pki/ca-key-seal.ts';
import { type CaSet, META_ROTATION_PHASE, type RotationPhase } from '../pki/ca-set.ts';
import { dataDirKey, keepCaKey, NEXT_CA_KEY_FILE, readCaSet } from '../pki/fleet-authority.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { CaRow } from '../store/certificate-authorities-table.ts';

/** A step an operator asks for: the next phase, or `rollback`. */
export type RotationStep = Exclude<RotationPhase, 'standby'> | 'standby';

export interface RotationOptions {
  /** The broker's data dir: where a single broker keeps its CA keys as files. */
  dataDir: string;
  /** The CA key secret, where the store keeps CA keys sealed. */
  secret?: string | undefined;
  /** The active CA's key as the operator keeps it (`--ca-key-file`), when the store keeps none. */
  activeKeyPem?: string | undefined;
  /** Complete even though some agents still hold certificates of the CA being dropped. */
  force?: boolean;
  now?: number;
}

/** The phase each phase may move to (rollback aside). */
const NEXT_PHASE: Record<RotationPhase, RotationStep | undefined> = {
  standby: 'init',
  init: 'update-clients',
  'update-clients': 'update-servers',
  'update-servers': 'standby',
  rollback: 'standby',
};

/** Every live agent and the pin of the CA of its current certificate. */
export async function agentsByCa(store: BrokerStore, set: CaSet): Promise<Map<string, string[]>> {
  const current = await store.certificates.currentByAgent();
  const agents = await store.agents.list({ includeRevoked: false });
  const byCa = new Map<string, string[]>();
  for (const agent of agents) {
    const pin = current.get(agent.id)?.caPin ?? set.active.pin;
    byCa.set(pin, [...(byCa.get(pin) ?? []), agent.name]);
  }
  for (const names of byCa.values()) names.sort();
  return byCa;
}

/**
 * Takes one step of a CA rotation on the store; every broker of it follows
 * within a second. `init` makes the next CA (its key kept as the store keeps
 * keys) and certifies its key with the active one; the middle steps change
 * only the phase; `standby` after `update-servers` retires the old CA, and
 * after `rollback` drops the next one. Dropping a CA that live agents still
 * hold certificates of is refused, naming them, unless forced.
 */
export async function rotateCa(store: BrokerStore, step: RotationStep, options: RotationOptions): Promise<CaSet> {
  const now = options.now ?? Date.now();
  await store.transaction(async () => {
    const set = await readCaSet(store);
    const expected = NEXT_PHASE[set.phase];
    const canRollBack = set.phase === 'init' || set.phase === 'update-clients' || set.phase === 'update-servers';
    if (step === 'rollback' ? !canRollBack : step !== expected) {
      throw new FleetError('conflict', `the CA rotation is in phase ${set.phase}: ${step} cannot come next`, {
        hint:
          set.phase === 'standby'
            ? 'Start a rotation with: fleetmesh ca rotate init'
            : `The next step is: fleetmesh ca rotate ${expected}${canRollBack ? ' (or rollback)' : ''}.`,
      });
    }
    if (step === 'init') await beginRotation(store, set, options, now);
    else if (step === 'rollback' && set.phase === 'init') await dropNext(store, set, options, now, 'standby');
    else if (step === 'standby' && set.phase === 'rollback') await dropNext(store, set, options, now, 'standby');
    else if (step === 'standby') await completeRotation(store, set, options, now);
    else await store.setMeta(META_ROTATION_PHASE, step);
  });
  return readCaSet(store);
}

function openKey(row: CaRow, options: RotationOptions): string {
  const key =
    row.keySealed !== null && options.secret !== undefined
      ? unsealCaKey(row.keySealed, options.secret)
      : (dataDirKey(options.dataDir, row.certificatePem) ?? options.activeKeyPem);
  if (key === undefined) {
    throw new FleetError('forbidden', `the key of the active CA ${row.pin} cannot be opened here, and init certifies the next CA with it`, {
      hint:
        row.keySealed !== null
          ? 'Give the CA key secret (--ca-key-secret-file).'
          : 'Give the active CA key (--ca-key-file), or run this where the broker keeps it.',
    });
  }
  return key;
}

async function beginRotation(store: BrokerStore, set: CaSet, options: RotationOptions, now: number): Promise<void> {
  const activeKey = openKey(set.active, options);
  const next = await createCertificateAuthority({ commonName: `fleetmesh CA ${new Date(now).toISOString().slice(0, 19)}Z`, lifetimeMs: CA_LIFETIME_MS, now });
  const cross = crossCertify({ certificatePem: set.active.certificatePem, privateKeyPem: activeKey }, next, {
    lifetimeMs: Math.max(0, readCertificate(set.active.certificatePem).notAfter.getTime() - now),
    now,
  });
  const kept = await keepCaKey(store, options.dataDir, NEXT_CA_KEY_FILE, next.privateKeyPem, options.secret);
  await store.authorities.insert({
    pin: certificatePin(next.certificatePem),
    certificatePem: next.certificatePem,
    ...kept,
    crossCertificatePem: cross,
    state: 'next',
    createdAt: now,
  });
  await store.setMeta(META_ROTATION_PHASE, 'init');
}

/** Refuses to drop a CA live agents still hold certificates of, unless forced. */
async function checkNobodyLeft(store: BrokerStore, set: CaSet, pin: string, options: RotationOptions, what: string): Promise<void> {
  const left = (await agentsByCa(store, set)).get(pin) ?? [];
  if (left.length === 0 || options.force) return;
  throw new FleetError(
    'conflict',
    `${left.length} agent${left.length === 1 ? '' : 's'} still hold${left.length === 1 ? 's' : ''} a certificate of CA ${pin}, which ${what}: ${left.slice(0, 20).join(', ')}${left.length > 20 ? ', …' : ''}`,
    {
      hint: 'They renew over their streams within seconds of connecting (fleetmesh ca status shows who is left); add --force to go ahead, and they must then enroll again.',
    },
  );
}

async function completeRotation(store: BrokerStore, set: CaSet, options: RotationOptions, now: number): Promise<void> {
  const next = set.next as CaRow;
  await checkNobodyLeft(store, set, set.active.pin, options, 'the rotation retires');
  await store.authorities.setState(set.active.pin, 'retired', now);
  await store.authorities.setState(next.pin, 'active', now);
  await store.setMeta(META_ROTATION_PHASE, 'standby');
  // A single broker's key files: the new CA's becomes ca.key; the retired one signs nothing again.
  const nextFile = join(options.dataDir, NEXT_CA_KEY_FILE);
  if (existsSync(nextFile)) renameSync(nextFile, join(options.dataDir, CA_KEY_FILE));
}

async function dropNext(store: BrokerStore, set: CaSet, options: RotationOptions, now: number, phase: RotationPhase): Promise<void> {
  const next = set.next as CaRow;
  if (set.phase === 'rollback') await checkNobodyLeft(store, set, next.pin, options, 'the rollback drops');
  await store.authorities.setState(next.pin, 'retired', now);
  await store.setMeta(META_ROTATION_PHASE, phase);
  rmSync(join(options.dataDir, NEXT_CA_KEY_FILE), { force: true });
}

import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readCertificate } from '../../shared/pki/certificates.ts';
import { writeFileAtomic, writePrivateKey } from '../../shared/pki/key-files.ts';

const STATE_FILE = 'agent.json';
const KEY_FILE = 'agent.key';
const CERT_FILE = 'agent.crt';
const CA_FILE = 'ca.crt';

/** An enrolled agent's identity: who the broker says it is, and the key and certificate proving it. */
export interface AgentIdentity {
  agentId: string;
  name: string;
  brokerAddress: string;
  caCertificatePem: string;
  certificatePem: string;
  privateKeyPem: string;
  notBefore: Date;
  notAfter: Date;
  serial: string;
  /** Pins of CAs it trusted before a rotation replaced them: an agent given its first --ca-pin again is still this broker's. */
  previousCaPins?: string[];
}

interface StateFile {
  agent_id: string;
  name: string;
  broker: string;
  previous_ca_pins?: string[];
}

function paths(dataDir: string) {
  return {
    state: join(dataDir, STATE_FILE),
    key: join(dataDir, KEY_FILE),
    cert: join(dataDir, CERT_FILE),
    ca: join(dataDir, CA_FILE),
  };
}

/**
 * Finishes a renewal a crash interrupted. Renewal writes `agent.key.new` and
 * `agent.crt.new`, then renames the key, then the certificate: a lone
 * `agent.crt.new` means the key is already in place.
 */
function completeInterruptedRenewal(dataDir: string): void {
  const p = paths(dataDir);
  const keyNew = `${p.key}.new`;
  const certNew = `${p.cert}.new`;
  if (existsSync(certNew) && !existsSync(keyNew)) renameSync(certNew, p.cert);
  rmSync(keyNew, { force: true });
  rmSync(certNew, { force: true });
}

/** The identity in a data dir, or undefined when the agent has not enrolled yet. */
export function loadIdentity(dataDir: string): AgentIdentity | undefined {
  const p = paths(dataDir);
  if (!existsSync(p.state)) return undefined;
  completeInterruptedRenewal(dataDir);
  const state = JSON.parse(readFileSync(p.state, 'utf8')) as StateFile;
  const certificatePem = readFileSync(p.cert, 'utf8');
  const facts = readCertificate(certificatePem);
  return {
    agentId: state.agent_id,
    name: state.name,
    brokerAddress: state.broker,
    caCertificatePem: readFileSync(p.ca, 'utf8'),
    certificatePem,
    privateKeyPem: readFileSync(p.key, 'utf8'),
    notBefore: facts.notBefore,
    notAfter: facts.notAfter,
    serial: facts.serial,
    previousCaPins: state.previous_ca_pins ?? [],
  };
}

/** Writes a fresh identity after enrollment (key first, state file last: no state file, no identity). */
export function saveIdentity(dataDir: string, identity: AgentIdentity): void {
  const p = paths(dataDir);
  writePrivateKey(p.key, identity.privateKeyPem);
  writeFileAtomic(p.cert, identity.certificatePem);
  writeFileAtomic(p.ca, identity.caCertificatePem);
  writeState(dataDir, identity);
}

function writeState(dataDir: string, identity: AgentIdentity): void {
  const state: StateFile = {
    agent_id: identity.agentId,
    name: identity.name,
    broker: identity.brokerAddress,
    ...(identity.previousCaPins?.length ? { previous_ca_pins: identity.previousCaPins } : {}),
  };
  writeFileAtomic(paths(dataDir).state, `${JSON.stringify(state, null, 2)}\n`);
}

/** Trusts another set of CAs from now on (a CA rotation step the broker told of over the verified stream). */
export function replaceTrust(dataDir: string, identity: AgentIdentity, caBundlePem: string, previousPins: string[]): AgentIdentity {
  const next = { ...identity, caCertificatePem: caBundlePem, previousCaPins: [...new Set([...(identity.previousCaPins ?? []), ...previousPins])].slice(-16) };
  writeState(dataDir, next);
  writeFileAtomic(paths(dataDir).ca, caBundlePem);
  return next;
}

/** Installs a renewed key and certificate without ever leaving a mismatched pair behind. */
export function replaceCertificate(dataDir: string, identity: AgentIdentity, privateKeyPem: string, certificatePem: string): AgentIdentity {
  const p = paths(dataDir);
  writePrivateKey(`${p.key}.new`, privateKeyPem);
  writeFileAtomic(`${p.cert}.new`, certificatePem);
  renameSync(`${p.key}.new`, p.key);
  renameSync(`${p.cert}.new`, p.cert);
  const facts = readCertificate(certificatePem);
  return { ...identity, certificatePem, privateKeyPem, notBefore: facts.notBefore, notAfter: facts.notAfter, serial: facts.serial };
}

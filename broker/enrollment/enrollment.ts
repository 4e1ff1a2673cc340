import { randomBytes } from 'node:crypto';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { publicKeyFingerprint, readCertificateRequest } from '../../shared/pki/certificates.ts';
import type { CertificateIssuer } from '../pki/certificate-issuer.ts';
import type { FleetAuthority, SignedCertificate } from '../pki/fleet-authority.ts';
import { ANY_SCOPE } from '../store/agent-roles-table.ts';
import type { AgentRow } from '../store/agents-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { redeemJoinToken } from './join-tokens.ts';

const AGENT_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

function checkAgentName(name: string): void {
  if (!AGENT_NAME.test(name)) {
    throw new FleetError('invalid_argument', `"${name}" is not a valid agent name`, {
      hint: 'An agent name is 1-63 letters, digits, ".", "_" or "-", starting and ending with a letter or digit; pass one with --name.',
    });
  }
}

/**
 * What an unauthenticated Enroll may carry, checked before anything is parsed,
 * so a stranger's request costs the broker little (an RSA 4096 request is
 * about 1.7 KiB of PEM; a 15 MiB one took 2 s of the event loop to parse).
 */
const ENROLL_FIELD_LIMITS = { csrPem: 16 * 1024, token: 128, name: 63, previousAgentId: 64, agentVersion: 64 } as const;

const FIELD_NAMES: Record<keyof typeof ENROLL_FIELD_LIMITS, string> = {
  csrPem: 'the certificate signing request',
  token: 'the join token',
  name: 'the agent name',
  previousAgentId: 'the previous agent id',
  agentVersion: 'the agent version',
};

/** Refuses an oversized field without echoing it. */
function checkEnrollmentSizes(request: Pick<EnrollmentRequest, keyof typeof ENROLL_FIELD_LIMITS>): void {
  for (const [field, limit] of Object.entries(ENROLL_FIELD_LIMITS) as [keyof typeof ENROLL_FIELD_LIMITS, number][]) {
    const length = request[field].length;
    if (length > limit) {
      throw new FleetError('invalid_argument', `${FIELD_NAMES[field]} is ${length} characters long; at most ${limit} are accepted`, {
        hint: 'A fleetmesh agent never sends this: enroll with fleetmesh agent --token … --ca-pin ….',
      });
    }
  }
}

/** How long after its enrollment an agent that never connected may ask again for the answer it lost. */
const LOST_ANSWER_RETRY_MS = 10 * 60_000;

/**
 * Whether an enrollment under a name already held is the holder asking again
 * for an answer it never received: the same key (the request's signature
 * proves its possession), enrolled moments ago, never connected since.
 */
function isLostAnswerRetry(holder: AgentRow, keySha256: string, now: number): boolean {
  return holder.publicKeySha256 === keySha256 && holder.lastSeenAt === null && now - holder.enrolledAt < LOST_ANSWER_RETRY_MS;
}

/** The public key of a certificate request of bounded size. */
function requestPublicKey(csrPem: string): string {
  checkEnrollmentSizes({ csrPem, token: '', name: '', previousAgentId: '', agentVersion: '' });
  return readCertificateRequest(csrPem).publicKeyPem;
}

interface EnrollmentRequest {
  token: string;
  csrPem: string;
  name: string;
  previousAgentId: string;
  agentVersion: string;
}

interface EnrollmentResult {
  agentId: string;
  name: string;
  certificatePem: string;
  caCertificatePem: string;
  notAfter: Date;
  labels: Record<string, string>;
}

interface RenewalResult {
  certificatePem: string;
  notAfter: Date;
  /** The pin of the CA that issued it. */
  caPin: string;
}

/**
 * Turns join tokens into agent identities, and renews them. Everything an
 * enrollment changes (token use, agent row, certificate row) is written in one
 * transaction, so a refused enrollment leaves nothing behind.
 */
export class Enrollment {
  /** Agent certificates renewed since the broker started (for /metrics). */
  renewals = 0;

  constructor(
    private readonly store: BrokerStore,
    /** The fleet's CAs, for the bundle a new agent trusts. */
    private readonly authority: FleetAuthority,
    /** Who signs: this broker, or in a cluster the broker holding the signer lease. */
    private readonly issuer: CertificateIssuer,
    private readonly certLifetimeMs: number,
    private readonly log: Logger,
  ) {}

  async enroll(request: EnrollmentRequest, now = Date.now()): Promise<EnrollmentResult> {
    checkEnrollmentSizes(request);
    checkAgentName(request.name);
    const publicKeyPem = requestPublicKey(request.csrPem);
    const keySha256 = publicKeyFingerprint(publicKeyPem);
    const result = await this.store.transaction(async () => {
      const holder = await this.store.agents.findLiveByName(request.name);
      // The answer to an earlier attempt was lost (the agent gave up waiting on a busy broker and asks again with
      // the same key): the same agent, whose token use was counted then.
      const retried = holder !== undefined && isLostAnswerRetry(holder, keySha256, now);
      const token = await redeemJoinToken(this.store, request.token, now, { countUse: !retried });
      let agentId = retried ? holder.id : '';
      const previous = request.previousAgentId ? await this.store.agents.get(request.previousAgentId) : undefined;
      if (previous?.revokedAt) {
        throw new FleetError('forbidden', `agent ${previous.name} (${previous.id}) was revoked; a revoked identity cannot enroll again`, {
          hint: 'To enroll this host as a new agent, remove its data dir (agent.json, agent.key, agent.crt) and run fleetmesh agent again.',
        });
      }
      if (previous && previous.publicKeySha256 === keySha256) agentId = previous.id;
      if (holder && holder.id !== agentId) {
        throw new FleetError('conflict', `the name "${request.name}" belongs to another enrolled agent (${holder.id})`, {
          hint: 'Start this agent with another --name, or revoke the other one first with fleetmesh revoke.',
        });
      }
      const reenrolling = agentId !== '';
      if (!reenrolling) agentId = randomBytes(8).toString('hex');
      const issued = await this.issuer.issueAgent({ publicKeyPem, agentId, name: request.name, lifetimeMs: this.certLifetimeMs });
      if (reenrolling) {
        await this.store.agents.reenroll(agentId, { name: request.name, tokenLabels: token.labels, publicKeySha256: keySha256, tokenId: token.id, now });
      } else {
        await this.store.agents.insert({
          id: agentId,
          name: request.name,
          tokenLabels: token.labels,
          publicKeySha256: keySha256,
          enrolledAt: now,
          tokenId: token.id,
        });
      }
      await this.recordCertificate(agentId, issued, keySha256, 'enroll', now);
      for (const role of token.roles) await this.store.roles.grant(agentId, { role, scope: ANY_SCOPE, grantedAt: now, grantedBy: `token:${token.id}` });
      return { agentId, issued, labels: token.labels, tokenId: token.id, reenrolling };
    });
    this.log.info(result.reenrolling ? 'agent re-enrolled' : 'agent enrolled', {
      agent: request.name,
      agent_id: result.agentId,
      token_id: result.tokenId,
      agent_version: request.agentVersion,
    });
    return {
      agentId: result.agentId,
      name: request.name,
      certificatePem: result.issued.certificatePem,
      // Every CA trusted now: while a rotation runs, the next one too.
      caCertificatePem: this.authority.set.bundlePem(),
      notAfter: result.issued.notAfter,
      labels: result.labels,
    };
  }

  /** A fresh certificate for a connected, unrevoked agent; its current one stays valid until it expires. */
  async renew(agentId: string, csrPem: string, now = Date.now()): Promise<RenewalResult> {
    const publicKeyPem = requestPublicKey(csrPem);
    const keySha256 = publicKeyFingerprint(publicKeyPem);
    const issued = await this.store.transaction(async () => {
      const agent = await this.store.agents.get(agentId);
      if (!agent || agent.revokedAt !== null) {
        throw new FleetError('forbidden', `agent ${agentId} is revoked or unknown`, { hint: 'Enroll again with a new join token.' });
      }
      const certificate = await this.issuer.issueAgent({ publicKeyPem, agentId, name: agent.name, lifetimeMs: this.certLifetimeMs });
      await this.recordCertificate(agentId, certificate, keySha256, 'renew', now);
      return certificate;
    });
    this.renewals += 1;
    this.log.info('agent certificate renewed', { agent_id: agentId, serial: issued.serial, not_after: issued.notAfter.toISOString(), ca_pin: issued.caPin });
    return { certificatePem: issued.certificatePem, notAfter: issued.notAfter, caPin: issued.caPin };
  }

  private async recordCertificate(agentId: string, issued: SignedCertificate, keySha256: string, issuedBy: 'enroll' | 'renew', now: number): Promise<void> {
    await this.store.certificates.insert({
      serial: issued.serial,
      agentId,
      issuedAt: now,
      notBefore: issued.notBefore.getTime(),
      notAfter: issued.notAfter.getTime(),
      publicKeySha256: keySha256,
      issuedBy,
      caPin: issued.caPin,
    });
    await this.store.agents.setCertificate(agentId, issued.serial, issued.notAfter.getTime(), keySha256);
  }
}

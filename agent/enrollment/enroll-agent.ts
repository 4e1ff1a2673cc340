import { create } from '@bufbuild/protobuf';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { EnrollRequestSchema, type EnrollResponse } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { fromGrpcError, GrpcCode, type GrpcStatus } from '../../shared/grpc/status-codes.ts';
import { parseHostPort } from '../../shared/options/values.ts';
import { createCertificateRequest } from '../../shared/pki/certificate-request.ts';
import { createKeyPair, type KeyPair, keyPairOf, publicKeyFingerprint, readCertificate } from '../../shared/pki/certificates.ts';
import { FLEETMESH_VERSION } from '../../shared/version.ts';
import { parseBrokerAddresses } from '../connection/broker-addresses.ts';
import { createMeshClient } from '../connection/mesh-client.ts';
import { type AgentIdentity, saveIdentity } from '../identity/agent-identity.ts';
import { caPinOf, caPinsOf, fetchBrokerCa } from './fetch-broker-ca.ts';

export interface EnrollOptions {
  brokerAddress: string;
  token: string;
  caPin: string;
  name: string;
  dataDir: string;
  /**
   * The identity this data dir held before: re-enrolling with its key proves
   * to the broker that this is the same agent, which keeps its id and name.
   */
  previous?: { agentId: string; privateKeyPem: string };
  /**
   * The key pair to enroll with, made once by a caller that tries again: a
   * retry after an answer lost on the way presents the same key, which the
   * broker recognises as the same agent.
   */
  keys?: KeyPair;
}

const ENROLL_TIMEOUT_MS = 30_000;

/**
 * Enrolls this host: makes a key pair that never leaves it, checks the broker
 * CA against the pin, and only then sends the token with a CSR over TLS
 * verified with that CA. The identity is written to the data dir only once the
 * broker has issued the certificate, so a refused enrollment leaves nothing.
 */
export async function enrollAgent(options: EnrollOptions): Promise<AgentIdentity> {
  const keys = options.keys ?? (options.previous ? keyPairOf(options.previous.privateKeyPem) : await createKeyPair());
  const addresses = parseBrokerAddresses(options.brokerAddress);
  // Any broker of a cluster enrolls; one that does not answer passes the turn to the next.
  for (const [index, address] of addresses.entries()) {
    try {
      return await enrollAt(address, keys, options);
    } catch (error) {
      if (!(error instanceof FleetError && error.code === 'agent_offline') || index === addresses.length - 1) throw error;
    }
  }
  throw new FleetError('invalid_argument', '--broker names no broker');
}

async function enrollAt(brokerAddress: string, keys: KeyPair, options: EnrollOptions): Promise<AgentIdentity> {
  const { host, port } = parseHostPort(brokerAddress, '--broker');
  const caCertificatePem = await fetchBrokerCa(host, port, options.caPin);
  const client = createMeshClient(brokerAddress, { caCertificatePem });
  let response: EnrollResponse;
  try {
    response = await client
      .enroll(
        create(EnrollRequestSchema, {
          token: options.token,
          csrPem: createCertificateRequest(keys, options.name),
          name: options.name,
          previousAgentId: options.previous?.agentId ?? '',
          agentVersion: FLEETMESH_VERSION,
        }),
        ENROLL_TIMEOUT_MS,
      )
      .catch((status: GrpcStatus) => {
        throw fromGrpcError(status);
      });
  } catch (error) {
    const failure = error as FleetError;
    const grpcCode = failure.details?.grpcCode;
    if (grpcCode === GrpcCode.UNAVAILABLE || grpcCode === GrpcCode.DEADLINE_EXCEEDED) {
      // A certificate that does not name the address dialled is a setting to change, not a broker to wait for.
      if (/altnames|hostname/i.test(failure.message)) {
        throw new FleetError('invalid_argument', `cannot enroll with the broker at ${brokerAddress}: ${failure.message}`, {
          hint: `The broker's certificate does not name "${host}": start the broker with --advertise-names ${host}, or dial one of the names it has.`,
        });
      }
      throw new FleetError('agent_offline', `cannot enroll with the broker at ${brokerAddress}: ${failure.message}`, {
        hint: 'Check that the broker is running and reachable at --broker.',
      });
    }
    // The gRPC status stays in the details: a refusal for the rate (RESOURCE_EXHAUSTED) is worth trying again.
    throw new FleetError(failure.code, `enrollment refused: ${failure.message}`, {
      hint: failure.hint,
      ...(failure.details ? { details: failure.details } : {}),
    });
  } finally {
    client.close();
  }
  const facts = readCertificate(response.certificatePem);
  if (publicKeyFingerprint(facts.publicKeyPem) !== publicKeyFingerprint(keys.publicKeyPem)) {
    throw new FleetError('internal', 'the broker returned a certificate for another key', { hint: 'Report this; the broker answered wrongly.' });
  }
  const identity: AgentIdentity = {
    agentId: response.agentId,
    name: response.name,
    brokerAddress: options.brokerAddress,
    // What the broker, verified against the pinned CA, says to trust: while a CA rotation runs, the next CA too.
    caCertificatePem: caPinsOf(response.caCertificatePem).includes(caPinOf(caCertificatePem)) ? response.caCertificatePem : caCertificatePem,
    certificatePem: response.certificatePem,
    privateKeyPem: keys.privateKeyPem,
    notBefore: facts.notBefore,
    notAfter: facts.notAfter,
    serial: facts.serial,
  };
  saveIdentity(options.dataDir, identity);
  return identity;
}

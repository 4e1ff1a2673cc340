import type { FleetAuthority, SignedCertificate } from './fleet-authority.ts';

export interface AgentCertificateRequest {
  publicKeyPem: string;
  agentId: string;
  name: string;
  lifetimeMs: number;
}

export interface ServerCertificateRequest {
  publicKeyPem: string;
  names: string[];
  lifetimeMs: number;
}

/**
 * Where a broker gets certificates signed: by its own CA, or in a cluster by
 * the one broker holding the signer lease (cluster/signing-service.ts).
 */
export interface CertificateIssuer {
  issueAgent(request: AgentCertificateRequest): Promise<SignedCertificate>;
  issueServer(request: ServerCertificateRequest): Promise<SignedCertificate>;
}

/** A broker that signs for itself (one on its own store, or one of a store shared without a bus). */
export function localIssuer(authority: FleetAuthority): CertificateIssuer {
  return {
    issueAgent: async (request) => authority.issueAgentCertificate(request),
    issueServer: async (request) => authority.issueServerCertificate(request),
  };
}

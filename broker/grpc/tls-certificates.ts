import type { experimental } from '@grpc/grpc-js';

/**
 * Hands grpc-js the CAs client certificates are checked against and the
 * broker's serving identity, and hands it new ones while the broker runs (a
 * renewed serving certificate, a CA rotation step): grpc-js applies each to
 * the connections that come after. We serve through the certificate-provider
 * credentials because they are the grpc-js credentials that request a client
 * certificate without requiring one: enrollment happens before an agent has a
 * certificate, and every Connect checks for a verified one itself (see
 * connect-handler.ts).
 */
export class TlsCertificates implements experimental.CertificateProvider {
  private readonly caListeners = new Set<experimental.CaCertificateUpdateListener>();
  private readonly identityListeners = new Set<experimental.IdentityCertificateUpdateListener>();

  constructor(
    private ca: Buffer,
    private identity: { certificate: Buffer; privateKey: Buffer },
  ) {}

  update(next: { ca?: Buffer; identity?: { certificate: Buffer; privateKey: Buffer } }): void {
    if (next.ca) {
      this.ca = next.ca;
      for (const listener of this.caListeners) listener({ caCertificate: this.ca });
    }
    if (next.identity) {
      this.identity = next.identity;
      for (const listener of this.identityListeners) listener(this.identity);
    }
  }

  // grpc-js subscribes to a provider before it registers the watcher that
  // applies updates, so an update delivered synchronously would be lost and the
  // server would drop every connection: deliver on the next tick.
  addCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.caListeners.add(listener);
    queueMicrotask(() => listener({ caCertificate: this.ca }));
  }

  removeCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.add(listener);
    queueMicrotask(() => listener(this.identity));
  }

  removeIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.delete(listener);
  }
}

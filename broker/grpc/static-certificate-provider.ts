import type { experimental } from '@grpc/grpc-js';

/**
 * Hands grpc-js a fixed CA and server identity. We serve through the
 * certificate-provider credentials because they are the grpc-js credentials that
 * request a client certificate without requiring one: enrollment happens
 * before an agent has a certificate, and every Connect checks for a verified
 * one itself (see connect-handler.ts).
 */
export class StaticCertificateProvider implements experimental.CertificateProvider {
  constructor(
    private readonly ca: Buffer,
    private readonly identity: { certificate: Buffer; privateKey: Buffer },
  ) {}

  // grpc-js subscribes to a provider before it registers the watcher that
  // applies updates, so an update delivered synchronously would be lost and the
  // server would drop every connection: deliver on the next tick.
  addCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    queueMicrotask(() => listener({ caCertificate: this.ca }));
  }

  removeCaCertificateListener(): void {}

  addIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    queueMicrotask(() => listener(this.identity));
  }

  removeIdentityCertificateListener(): void {}
}

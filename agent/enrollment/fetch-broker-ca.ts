import { createHash, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { connect, type DetailedPeerCertificate } from 'node:tls';
import { FleetError } from '../../shared/errors/fleet-error.ts';

/** Normalises a pin as users may paste it: `sha256:AB:CD…` or `sha256:abcd…`. */
export function normalizePin(pin: string): string {
  const hex = pin
    .trim()
    .replace(/^sha256:/i, '')
    .replaceAll(':', '')
    .toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new FleetError('invalid_argument', `"${pin}" is not a CA pin`, {
      hint: 'The pin looks like sha256:<64 hex digits>; fleetmesh token create prints it.',
    });
  }
  return `sha256:${hex}`;
}

/** The pin of a CA certificate: the SHA-256 of its DER form, as the broker prints it. */
export function caPinOf(certificatePem: string): string {
  const known = pinsByPem.get(certificatePem);
  if (known !== undefined) return known;
  const pin = `sha256:${createHash('sha256').update(new X509Certificate(certificatePem).raw).digest('hex')}`;
  // An agent knows one or two CAs; a process of simulated agents shares them. The oldest is forgotten past the cap.
  if (pinsByPem.size >= PIN_CACHE_SIZE) pinsByPem.delete(pinsByPem.keys().next().value as string);
  pinsByPem.set(certificatePem, pin);
  return pin;
}

/**
 * Pins already worked out, by certificate: each stream's Hello names the CAs
 * the agent trusts, and parsing the certificate again for every dial was a
 * fifth of what a process of 2,500 simulated agents did while they retried.
 */
const pinsByPem = new Map<string, string>();
const PIN_CACHE_SIZE = 16;

/** The pins of every CA certificate in a bundle (one PEM after another). */
export function caPinsOf(bundlePem: string): string[] {
  return (bundlePem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(caPinOf);
}

const TIMEOUT_MS = 10_000;

/**
 * Reads the certificates the broker presents, without trusting them, and
 * returns the one whose hash matches the pin: the broker CA. Nothing but a TLS
 * handshake has happened when this returns or throws, so a broker whose CA does
 * not match never sees the join token.
 */
export function fetchBrokerCa(host: string, port: number, pin: string): Promise<string> {
  const expected = normalizePin(pin);
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port,
      ...(isIP(host) ? {} : { servername: host }),
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
      timeout: TIMEOUT_MS,
    });
    const fail = (error: FleetError) => {
      socket.destroy();
      reject(error);
    };
    socket.on('timeout', () =>
      fail(
        new FleetError('agent_offline', `no TLS answer from the broker at ${host}:${port} within ${TIMEOUT_MS / 1000} s`, {
          hint: 'Check --broker and that the broker is running and reachable.',
        }),
      ),
    );
    socket.on('error', (error) =>
      fail(
        new FleetError('agent_offline', `cannot reach the broker at ${host}:${port}: ${error.message}`, {
          hint: 'Check --broker and that the broker is running and reachable.',
        }),
      ),
    );
    socket.on('secureConnect', () => {
      const presented: string[] = [];
      let certificate: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
      const seen = new Set<string>();
      while (certificate?.raw && !seen.has(certificate.fingerprint256)) {
        seen.add(certificate.fingerprint256);
        const pinOf = `sha256:${createHash('sha256').update(certificate.raw).digest('hex')}`;
        presented.push(pinOf);
        if (pinOf === expected) {
          const pem = new X509Certificate(certificate.raw).toString();
          socket.end();
          resolve(pem);
          return;
        }
        certificate = certificate.issuerCertificate;
      }
      fail(
        new FleetError(
          'forbidden',
          `the server at ${host}:${port} does not present the CA pinned by ${expected} (it presented ${presented.join(', ') || 'no certificate'}); the join token was not sent`,
          {
            hint: 'Check that --broker names the broker that printed the token, and that --ca-pin was copied whole.',
          },
        ),
      );
    });
  });
}

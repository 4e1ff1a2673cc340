import { isIP } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import type { ProxmoxTrust } from '../../../shared/domains/proxmox/proxmox-options.ts';
import { type FailureClass, proxmoxFailure } from './proxmox-failure.ts';

interface TlsTarget {
  host: string;
  port: number;
  trust: ProxmoxTrust;
  /** The CA certificates of `trust.kind === 'ca'`, already read. */
  caPem?: string;
}

/** `AB:CD:…`, as `pvenode cert info` prints a fingerprint. */
function colonHex(hex: string): string {
  return (hex.toUpperCase().match(/../g) ?? []).join(':');
}

/** Socket errors before the handshake completed: TLS failures are `tls`, everything else `transport`. */
export function socketFailureClass(error: NodeJS.ErrnoException): FailureClass {
  const code = error.code ?? '';
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || code === 'EPROTO' || /ssl|tls|handshake/i.test(error.message)) return 'tls';
  return 'transport';
}

function trustHint(trust: ProxmoxTrust): string {
  if (trust.kind === 'fingerprint')
    return 'Compare with pvenode cert info on the host: if the certificate was renewed on purpose, pin the new fingerprint (--proxmox-fingerprint); otherwise something else answers at that address.';
  if (trust.kind === 'ca')
    return `Check that ${trust.caFile} holds the CA that signed the node's certificate (/etc/pve/pve-root-ca.pem on the host) and that the endpoint uses a name the certificate has.`;
  return "Give --proxmox-ca-file /etc/pve/pve-root-ca.pem, or pin the node's certificate with --proxmox-fingerprint (pvenode cert info shows it).";
}

/**
 * Opens a TLS connection to the API and decides whether to trust it before a
 * single byte of the request (and so the token) is written: the SHA-256 of the
 * leaf certificate against the pin, or Node's own chain and host name checks
 * against the CA file or system store, or nothing at all in insecure mode.
 * The caller owns the socket it resolves with.
 */
export function openTlsConnection(target: TlsTarget, signal: AbortSignal): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    // Verification is decided below from socket.authorized (Node's verdict) or the pin, so the socket is never rejected by Node itself.
    const socket = connect({
      host: target.host,
      port: target.port,
      rejectUnauthorized: false,
      ...(isIP(target.host) ? {} : { servername: target.host }),
      ...(target.trust.kind === 'ca' && target.caPem ? { ca: target.caPem } : {}),
    });
    const fail = (error: unknown) => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      reject(error);
    };
    const onAbort = () => fail(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const onError = (error: NodeJS.ErrnoException) => {
      const failureClass = socketFailureClass(error);
      fail(
        proxmoxFailure(failureClass, `cannot connect to ${target.host}:${target.port}: ${error.code ?? error.message}`, {
          hint:
            failureClass === 'tls'
              ? 'The TLS handshake failed: check that the endpoint is the HTTPS API of a Proxmox VE node (port 8006).'
              : 'Check that pveproxy runs on the node (systemctl status pveproxy) and that the agent can reach the endpoint.',
          cause: error,
        }),
      );
    };
    socket.once('error', onError);
    socket.once('secureConnect', () => {
      const certificate = socket.getPeerCertificate();
      const presented = certificate.fingerprint256 ?? '';
      const trust = target.trust;
      let problem: string | undefined;
      if (trust.kind === 'fingerprint') {
        if (presented.replaceAll(':', '').toLowerCase() !== trust.sha256Hex) {
          problem = `the server presented a certificate with SHA-256 fingerprint ${presented || 'unknown'}, not the pinned ${colonHex(trust.sha256Hex)}`;
        }
      } else if (trust.kind !== 'insecure' && !socket.authorized) {
        const reason = socket.authorizationError instanceof Error ? socket.authorizationError.message : String(socket.authorizationError);
        problem = `the server certificate (SHA-256 ${presented || 'unknown'}) is not trusted: ${reason}`;
      }
      if (problem) {
        fail(proxmoxFailure('tls', `${problem}; nothing was sent`, { hint: trustHint(trust) }));
        return;
      }
      signal.removeEventListener('abort', onAbort);
      socket.off('error', onError);
      // Until the HTTP request attaches its own listener on the next tick, an error must not go unhandled.
      socket.on('error', () => undefined);
      resolve(socket);
    });
  });
}

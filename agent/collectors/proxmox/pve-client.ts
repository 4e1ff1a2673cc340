import type { ProxmoxTrust } from '../../../shared/domains/proxmox/proxmox-options.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import { http } from '../../node-http.ts';
import { apiRefusal } from './api-refusal.ts';
import type { ApiToken } from './api-token.ts';
import { proxmoxFailure } from './proxmox-failure.ts';
import { openTlsConnection, socketFailureClass } from './tls-connection.ts';

interface PveClientOptions {
  /** `https://host:port`. */
  endpoint: string;
  trust: ProxmoxTrust;
  timeoutMs: number;
  maxResponseBytes: number;
  log: Logger;
}

export type PveParams = Record<string, string | number | boolean | undefined>;

interface PveRequest {
  method: 'GET' | 'POST';
  /** Below /api2/json, with each variable segment already URI-encoded. */
  path: string;
  params?: PveParams;
  token: ApiToken;
  /** The CA file's text when trust is `ca`. */
  caPem?: string;
  /** The call's cancellation; the client adds its own timeout. */
  signal: AbortSignal;
  /** The call's deadline: a request gives up a little before it, so its answer still carries the failure class. */
  deadlineUnixMs: number;
}

/** What the API answered: its `data`, and the envelope's `total` when it sends one (task logs do). */
interface PveAnswer {
  data: unknown;
  total: number | undefined;
}

/** Time left for the agent to answer once a request gave up at the call's deadline. */
const DEADLINE_MARGIN_MS = 250;

/** Failures worth one more try of a GET: the connection dropped before any answer came. */
const RESET_BEFORE_ANSWER = new WeakSet<object>();

function encodeParams(params: PveParams = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    // Proxmox VE writes booleans as 1 and 0.
    if (value !== undefined) search.set(key, typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
  }
  return search.toString();
}

/**
 * Requests against one Proxmox VE API: a fresh TLS connection per request,
 * trusted before anything is sent; one deadline over connect and answer;
 * answers bounded in size; GETs tried once more when the connection drops
 * before an answer, POSTs never (a power action must not run twice). Messages
 * name the token's id, never its secret.
 */
export class PveClient {
  private readonly host: string;
  private readonly port: number;

  constructor(private readonly options: PveClientOptions) {
    const url = new URL(options.endpoint);
    this.host = url.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(url.port || 443);
  }

  async call(request: PveRequest): Promise<PveAnswer> {
    const attempts = request.method === 'GET' ? 2 : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(request);
      } catch (error) {
        if (attempt >= attempts || typeof error !== 'object' || error === null || !RESET_BEFORE_ANSWER.has(error)) throw error;
        this.options.log.debug('proxmox request retried after the connection dropped', { method: request.method, path: request.path });
      }
    }
  }

  private async once(pveRequest: PveRequest): Promise<PveAnswer> {
    const { maxResponseBytes } = this.options;
    const timeoutMs = Math.max(0, Math.min(this.options.timeoutMs, pveRequest.deadlineUnixMs - Date.now() - DEADLINE_MARGIN_MS));
    const timeout = new AbortController();
    const timer = setTimeout(
      () =>
        timeout.abort(
          proxmoxFailure('transport', `${pveRequest.method} ${pveRequest.path}: no answer from ${this.options.endpoint} within ${timeoutMs} ms`, {
            hint: 'The node is overloaded or the network drops packets; check pveproxy and the load of the node.',
          }),
        ),
      timeoutMs,
    );
    const signal = AbortSignal.any([pveRequest.signal, timeout.signal]);
    const started = Date.now();
    try {
      const socket = await openTlsConnection(
        { host: this.host, port: this.port, trust: this.options.trust, ...(pveRequest.caPem ? { caPem: pveRequest.caPem } : {}) },
        signal,
      );
      const encoded = encodeParams(pveRequest.params);
      const body = pveRequest.method === 'POST' ? encoded : '';
      const path = `/api2/json${pveRequest.path}${pveRequest.method === 'GET' && encoded ? `?${encoded}` : ''}`;
      return await new Promise<PveAnswer>((resolve, reject) => {
        let answered = false;
        const req = http.request({
          host: this.host,
          port: this.port,
          method: pveRequest.method,
          path,
          headers: {
            Authorization: pveRequest.token.authorization(),
            Accept: 'application/json',
            ...(pveRequest.method === 'POST' ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) } : {}),
          },
          createConnection: () => socket,
        });
        const fail = (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          req.destroy();
          socket.destroy();
          reject(error);
        };
        const onAbort = () => fail(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        req.on('error', (error: NodeJS.ErrnoException) => {
          const failure = proxmoxFailure(
            socketFailureClass(error),
            `${pveRequest.method} ${pveRequest.path}: the connection failed: ${error.code ?? error.message}`,
            {
              hint:
                pveRequest.method === 'POST'
                  ? 'Whether Proxmox VE received the request is unknown, and it was not sent again: look for its task with proxmox_tasks before trying again.'
                  : 'Check that pveproxy runs on the node and that nothing between the agent and the node cuts connections.',
              cause: error,
            },
          );
          if (!answered) RESET_BEFORE_ANSWER.add(failure);
          fail(failure);
        });
        req.on('response', (response) => {
          answered = true;
          const declared = Number(response.headers['content-length']);
          const tooLarge = () =>
            proxmoxFailure('response', `the answer to ${pveRequest.method} ${pveRequest.path} is larger than ${maxResponseBytes} bytes`, {
              hint: 'Ask for less (filters, a smaller limit); a larger answer is refused to bound the memory of the agent.',
            });
          if (declared > maxResponseBytes) {
            fail(tooLarge());
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxResponseBytes) fail(tooLarge());
            else chunks.push(chunk);
          });
          response.on('error', (error) =>
            fail(proxmoxFailure('transport', `${pveRequest.method} ${pveRequest.path}: the answer was cut off (${error.message})`, { hint: 'Try again.' })),
          );
          response.on('end', () => {
            if (size > maxResponseBytes) return;
            signal.removeEventListener('abort', onAbort);
            socket.destroy();
            const text = Buffer.concat(chunks).toString('utf8');
            const status = response.statusCode ?? 0;
            this.options.log.debug('proxmox request', {
              method: pveRequest.method,
              path: pveRequest.path,
              status,
              token: pveRequest.token.id,
              duration_ms: Date.now() - started,
            });
            if (status < 200 || status >= 300) {
              reject(apiRefusal(pveRequest, response, text));
              return;
            }
            let parsed: unknown;
            try {
              parsed = JSON.parse(text);
            } catch {
              reject(
                proxmoxFailure('response', `the answer to ${pveRequest.method} ${pveRequest.path} is not JSON`, {
                  hint: 'Something other than the Proxmox VE API answers at the endpoint, or a proxy rewrote the answer.',
                }),
              );
              return;
            }
            if (parsed === null || typeof parsed !== 'object' || !('data' in parsed)) {
              reject(
                proxmoxFailure('response', `the answer to ${pveRequest.method} ${pveRequest.path} has no data field`, {
                  hint: 'Something other than the Proxmox VE API answers at the endpoint.',
                }),
              );
              return;
            }
            const total = (parsed as { total?: unknown }).total;
            resolve({ data: (parsed as { data: unknown }).data, total: typeof total === 'number' ? total : undefined });
          });
        });
        req.end(body);
      });
    } finally {
      clearTimeout(timer);
    }
  }
}

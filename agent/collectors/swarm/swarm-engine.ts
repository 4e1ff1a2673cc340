import type { Readable } from 'node:stream';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { dockerMessage, dockerStatus } from '../../engine/engine-errors.ts';

// biome-ignore lint/suspicious/noExplicitAny: the engine's JSON is read defensively by the callers
export type EngineJson = any;

interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Status codes that are not errors. */
  ok?: number[];
  stream?: boolean;
}

/**
 * The Swarm endpoints of the Docker Engine API, called directly (through
 * dockerode's modem) so every query parameter and body is explicit, and every
 * failure comes back in our vocabulary: a version clash is `conflict` (re-read
 * and retry), a missing object `not_found`, anything else `collector_failed`
 * with the engine's own words.
 */
export class SwarmEngine {
  constructor(private readonly docker: Pick<EngineClient, 'modem'>) {}

  request(method: 'GET' | 'POST' | 'DELETE', path: string, options: RequestOptions = {}): Promise<EngineJson> {
    const query = Object.fromEntries(
      Object.entries(options.query ?? {})
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, String(v)]),
    );
    const statusCodes: Record<number, boolean | string> = { 200: true, 201: true, 204: true, 304: true };
    for (const code of options.ok ?? []) statusCodes[code] = true;
    return new Promise((resolve, reject) => {
      this.docker.modem.dial(
        {
          path: `${path}?`,
          method,
          options: { _query: query, ...(options.body !== undefined ? { _body: options.body } : {}) },
          statusCodes: {
            ...statusCodes,
            400: 'bad parameter',
            403: 'forbidden',
            404: 'not found',
            409: 'conflict',
            500: 'server error',
            503: 'node is not part of a swarm',
          },
          isStream: options.stream === true,
          ...(method === 'POST' && options.body === undefined ? { allowEmpty: true } : {}),
        },
        (error: unknown, data: unknown) => (error ? reject(translate(error, method, path)) : resolve(data)),
      );
    });
  }

  stream(path: string, query: RequestOptions['query']): Promise<Readable> {
    return this.request('GET', path, { query, stream: true }) as Promise<Readable>;
  }
}

function translate(error: unknown, method: string, path: string): FleetError {
  const status = dockerStatus(error);
  const message = dockerMessage(error);
  if (status === 404) return new FleetError('not_found', message, { hint: 'find lists what exists in the swarm.', collector: 'swarm' });
  if (status === 409 || /update out of sequence|version.*(mismatch|out of date)/i.test(message)) {
    return new FleetError('conflict', `someone changed it first: ${message}`, {
      hint: 'Re-read it (describe shows the current version) and retry.',
      collector: 'swarm',
    });
  }
  if (status === 400 && /out of sequence/i.test(message)) return new FleetError('conflict', message, { hint: 'Re-read and retry.', collector: 'swarm' });
  if (status === 400)
    return new FleetError('invalid_argument', `the engine refused ${method} ${path}: ${message}`, {
      hint: "The engine's words are in the message.",
      collector: 'swarm',
    });
  if (status === 503) return new FleetError('collector_unavailable', `this engine is not a swarm manager: ${message}`, { collector: 'swarm' });
  return new FleetError('collector_failed', `the engine failed ${method} ${path}: ${message}`, { collector: 'swarm', cause: error });
}

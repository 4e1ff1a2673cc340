import type { Readable } from 'node:stream';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { EngineClient } from './engine-client.ts';
import { dockerMessage, dockerStatus } from './engine-errors.ts';
import { type ImageReference, parseImageReference } from './image-reference.ts';
import { onJsonLines } from './json-lines.ts';
import type { FoundLogin, RegistryCredentials } from './registry-credentials.ts';

/** How far a pull is: layers the engine has (downloaded, or there already) of those the image has. */
export interface PullProgress {
  image: string;
  layers_done: number;
  layers_total: number;
}

/** An image after a pull, with what it replaced. */
export interface PulledImage {
  image: string;
  registry: string;
  id: string;
  /** The image the tag named before the pull; null when the host did not have it. */
  previous_id: string | null;
  digest: string | null;
  size_bytes: number;
  status: 'pulled' | 'up_to_date';
  /** Where the host's registry login came from (a Docker config file or a credential helper); null when pulled anonymously. */
  credentials: string | null;
}

/** A line of the engine's pull stream (the parts read here). */
interface PullLine {
  id?: string;
  status?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** The layer states after which the engine has a layer. */
const LAYER_DONE = new Set(['Pull complete', 'Already exists']);

/**
 * Pulls images through the local engine with the host's own registry logins
 * (`RegistryCredentials`): a login goes from the host's Docker config to its
 * engine and nowhere else. A pull is followed to its last line, since the
 * engine reports a failed pull inside a stream it answered 200 to.
 */
export class ImagePuller {
  constructor(
    private readonly docker: Pick<EngineClient, 'pull' | 'getImage'>,
    private readonly credentials: RegistryCredentials,
  ) {}

  /** The image's id on this host, or null when the host does not have it. */
  async idOf(image: string): Promise<string | null> {
    try {
      return (await this.docker.getImage(image).inspect()).Id;
    } catch (error) {
      if (dockerStatus(error) === 404) return null;
      throw error;
    }
  }

  async pull(text: string, options: { signal: AbortSignal; onProgress?: (progress: PullProgress) => void }): Promise<PulledImage> {
    const reference = parseImageReference(text);
    const previous = await this.idOf(reference.text);
    const login = await this.credentials.loginFor(reference.registry);
    try {
      const stream = (await this.docker.pull(reference.text, {
        ...(login ? { authconfig: login.auth } : {}),
        abortSignal: options.signal,
      })) as Readable;
      await followPull(stream, options.signal, (done, total) => options.onProgress?.({ image: reference.text, layers_done: done, layers_total: total }));
    } catch (error) {
      throw pullFailure(error, reference, login, options.signal);
    }
    const pulled = await this.docker.getImage(reference.text).inspect();
    const repository = reference.text.replace(/@.*$/, '').replace(/:[^:/]*$/, '');
    return {
      image: reference.text,
      registry: reference.registry,
      id: pulled.Id,
      previous_id: previous,
      digest:
        (pulled.RepoDigests ?? []).find((digest) => digest.startsWith(`${repository}@`))?.replace(/^.*@/, '') ??
        pulled.RepoDigests?.[0]?.replace(/^.*@/, '') ??
        null,
      size_bytes: pulled.Size,
      status: previous === pulled.Id ? 'up_to_date' : 'pulled',
      credentials: login?.source ?? null,
    };
  }
}

/** Reads a pull's stream to its end: resolves when the engine finished it, rejects with the engine's words when it failed. */
function followPull(stream: Readable, signal: AbortSignal, onLayers: (done: number, total: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const layers = new Map<string, boolean>();
    let failure: string | undefined;
    onJsonLines(stream, (value) => {
      const line = value as PullLine;
      if (line.error || line.errorDetail?.message) {
        failure = line.errorDetail?.message ?? line.error;
        return;
      }
      // Lines with an id and a status describe one layer (the tag's own lines have no layer id).
      if (!line.id || !line.status || /^(Pulling from|Digest|Status)/.test(line.status)) return;
      const before = layers.get(line.id);
      const done = LAYER_DONE.has(line.status);
      layers.set(line.id, before === true || done);
      if (before === undefined || (done && before === false)) onLayers([...layers.values()].filter(Boolean).length, layers.size);
    });
    const abort = () => stream.destroy(Object.assign(new Error('the pull was stopped'), { name: 'AbortError' }));
    signal.addEventListener('abort', abort, { once: true });
    const settle = (error?: Error) => {
      signal.removeEventListener('abort', abort);
      if (error) reject(error);
      else if (failure !== undefined) reject(new Error(failure));
      else resolve();
    };
    stream.once('end', () => settle());
    stream.once('error', (error) => settle(error));
    stream.once('close', () => {
      if (signal.aborted) settle(Object.assign(new Error('the pull was stopped'), { name: 'AbortError' }));
    });
  });
}

/** Registries' words for a refused login or a login that is needed. */
const REFUSED =
  /unauthori[sz]ed|authentication required|no basic auth credentials|access.*denied|denied:|incorrect username or password|may require 'docker login'/i;
const MISSING = /manifest unknown|not found|does not exist|no such image/i;

/**
 * A failed pull in our vocabulary, each case with the step that helps: a
 * registry that wants a login the host does not hold (or refused the one it
 * holds), an image the registry does not have, a pull stopped by the call's
 * timeout, and anything else in the engine's words.
 */
function pullFailure(error: unknown, reference: ImageReference, login: FoundLogin | undefined, signal: AbortSignal): FleetError {
  if (error instanceof FleetError) return error;
  if (signal.aborted || (error as Error).name === 'AbortError') {
    return new FleetError('deadline_exceeded', `the pull of ${reference.text} did not finish in time`, {
      hint: 'Call again with a larger timeout_s; layers already downloaded are kept.',
    });
  }
  const words = dockerMessage(error);
  if (REFUSED.test(words)) {
    const held = login ? `it refused the login in ${login.source}` : `the agent's host holds no login for ${reference.registry}`;
    return new FleetError('forbidden', `the registry ${reference.registry} refused the pull of ${reference.text}: ${held} (${words})`, {
      hint: `On that host, log in to ${reference.registry} as the agent's user (docker login ${reference.registry}), or give the agent --docker-config with a Docker config that holds the login; logins never go through fleetmesh.`,
    });
  }
  if (MISSING.test(words)) {
    return new FleetError('not_found', `the registry ${reference.registry} has no image ${reference.text}: ${words}`, {
      hint: 'Check the repository and tag; image_list shows the images the host has.',
    });
  }
  return new FleetError('collector_failed', `the engine could not pull ${reference.text}: ${words}`, {
    hint: `Check that the host reaches ${reference.registry}; the engine's words are in the message.`,
  });
}

import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { engineRefusal } from './engine-refusal.ts';

/** An image as a fake registry holds it and a fake engine copies it: its id, and how its containers behave. */
export interface RegistryImage {
  id: string;
  /** The image's own configuration (Env, Cmd, Labels, Healthcheck…), which the engine merges into a container's. */
  config?: Record<string, unknown>;
  sizeBytes?: number;
  /** A container of it exits at once with this code instead of running. */
  exitCode?: number;
  /** What a health check of its containers reports once started (healthy when not given). */
  health?: 'starting' | 'healthy' | 'unhealthy';
}

/** The registry part of a reference, by the engine's rule (a first part with a dot or a port, or localhost); docker.io otherwise. */
function registryOf(reference: string): string {
  const slash = reference.indexOf('/');
  const first = slash >= 0 ? reference.slice(0, slash) : '';
  return slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost') ? first : 'docker.io';
}

/**
 * The registries a FakeEngine pulls from: images published under a
 * reference, and the logins a registry host wants. It records the login each
 * pull was handed, so a test sees what the engine was given and nothing else.
 */
export class FakeRegistry {
  private readonly published = new Map<string, RegistryImage>();
  private readonly logins = new Map<string, { username: string; password: string }>();
  /** Each pull the engine was asked for, oldest first, with the login it was handed. */
  readonly pulls: { image: string; auth: Record<string, unknown> | undefined }[] = [];

  /** An image a pull of `reference` fetches (a new one each time: a tag moved on). */
  publish(reference: string, behaviour: Omit<RegistryImage, 'id'> = {}): RegistryImage {
    const image = { id: `sha256:${randomBytes(32).toString('hex')}`, ...behaviour };
    this.published.set(reference, image);
    return image;
  }

  /** The registry host takes pulls only with this login. */
  requireLogin(registry: string, username: string, password: string): void {
    this.logins.set(registry, { username, password });
  }

  /** A pull as the registry answers it through the engine: the image, or the engine's refusal. */
  fetch(reference: string, auth: Record<string, unknown> | undefined): RegistryImage {
    this.pulls.push({ image: reference, auth });
    const registry = registryOf(reference);
    const login = this.logins.get(registry);
    if (login && (auth?.username !== login.username || auth?.password !== login.password)) {
      throw engineRefusal(500, `Head "https://${registry}/v2/${reference}": ${auth ? 'unauthorized: authentication required' : 'no basic auth credentials'}`);
    }
    const image = this.published.get(reference);
    if (!image) throw engineRefusal(404, `manifest for ${reference} not found: manifest unknown: manifest unknown`);
    return image;
  }
}

/** The lines the engine streams for a pull of two layers, ending with the image's status. */
export function pullStream(reference: string, fresh: boolean): Readable {
  const lines = [
    { status: `Pulling from ${reference.replace(/:[^:/]*$/, '')}`, id: reference.replace(/^.*:/, '') },
    { status: 'Pulling fs layer', id: 'layer1' },
    { status: 'Pulling fs layer', id: 'layer2' },
    { status: 'Downloading', id: 'layer1', progressDetail: { current: 10, total: 20 } },
    { status: 'Pull complete', id: 'layer1' },
    { status: 'Pull complete', id: 'layer2' },
    { status: `Status: ${fresh ? 'Downloaded newer image' : 'Image is up to date'} for ${reference}` },
  ];
  return Readable.from(lines.map((line) => `${JSON.stringify(line)}\r\n`));
}

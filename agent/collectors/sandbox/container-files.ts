import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { dockerMessage, dockerStatus } from '../../engine/engine-errors.ts';

interface Cached {
  size: number;
  mtime: string;
  text: string;
}

/** The first file of a tar archive (what the engine's archive endpoint returns for one file). */
function firstTarFile(tar: Buffer): Buffer {
  let offset = 0;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const size = Number.parseInt(header.subarray(124, 136).toString('ascii').replace(/\0.*$/, '').trim() || '0', 8);
    const type = String.fromCharCode(header[156] ?? 48);
    const body = offset + 512;
    if (type === '0' || type === '\0') return tar.subarray(body, body + size);
    offset = body + Math.ceil(size / 512) * 512;
  }
  throw new Error('the archive holds no regular file');
}

/**
 * Reads files inside a container without exec: through the engine's archive
 * endpoint (a HEAD first, so an unchanged file is served from cache by its size
 * and mtime), or, when the container bind-mounts that directory from the host
 * and the agent can see the host path, straight from there.
 */
export class ContainerFiles {
  private readonly cache = new Map<string, Cached>();

  constructor(private readonly docker: Pick<EngineClient, 'modem'>) {}

  private dial(method: 'HEAD' | 'GET', containerId: string, path: string): Promise<{ headers: Record<string, string>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      this.docker.modem.dial(
        {
          path: `/containers/${containerId}/archive?`,
          method,
          options: { _query: { path } },
          statusCodes: { 200: true, 400: 'bad parameter', 404: 'no such file', 500: 'server error' },
          isStream: true,
        },
        (error: unknown, result: unknown) => {
          if (error) {
            reject(error);
            return;
          }
          const stream = result as NodeJS.ReadableStream & { headers?: Record<string, string> };
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => resolve({ headers: stream.headers ?? {}, body: Buffer.concat(chunks) }));
          stream.on('error', reject);
        },
      );
    });
  }

  /** A file's text, or undefined when it does not exist. */
  async read(container: { id: string; mounts: { source: string; destination: string }[] }, path: string): Promise<string | undefined> {
    const host = this.hostPath(container.mounts, path);
    if (host) {
      if (!existsSync(host)) return undefined;
      const stat = statSync(host);
      const key = `host:${host}`;
      const hit = this.cache.get(key);
      if (hit && hit.size === stat.size && hit.mtime === stat.mtime.toISOString()) return hit.text;
      const text = readFileSync(host, 'utf8');
      this.cache.set(key, { size: stat.size, mtime: stat.mtime.toISOString(), text });
      return text;
    }
    const key = `${container.id}:${path}`;
    try {
      const head = await this.dial('HEAD', container.id, path);
      const statHeader = head.headers['x-docker-container-path-stat'];
      const stat = statHeader ? (JSON.parse(Buffer.from(statHeader, 'base64').toString('utf8')) as { size: number; mtime: string }) : undefined;
      const hit = this.cache.get(key);
      if (hit && stat && hit.size === stat.size && hit.mtime === stat.mtime) return hit.text;
      const archive = await this.dial('GET', container.id, path);
      const text = firstTarFile(archive.body).toString('utf8');
      if (stat) this.cache.set(key, { size: stat.size, mtime: stat.mtime, text });
      return text;
    } catch (error) {
      if (dockerStatus(error) === 404) return undefined;
      throw new FleetError('collector_failed', `cannot read ${path} in the sandbox: ${dockerMessage(error)}`, { collector: 'sandbox' });
    }
  }

  /** The host path of a file in the container, when a bind mount covers it and the agent can see that path. */
  private hostPath(mounts: { source: string; destination: string }[], path: string): string | undefined {
    for (const mount of mounts) {
      const relative = posix.relative(mount.destination, path);
      if (relative.startsWith('..') || posix.isAbsolute(relative)) continue;
      const candidate = join(mount.source, relative);
      if (existsSync(mount.source)) return candidate;
    }
    return undefined;
  }

  forget(containerId: string): void {
    for (const key of this.cache.keys()) if (key.startsWith(`${containerId}:`)) this.cache.delete(key);
  }
}

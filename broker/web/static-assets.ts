import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
};

/**
 * Where `npm run build` puts the console and widget bundles (`dist/web`), from
 * this file whether it runs as TypeScript (`broker/web/`) or built (`dist/broker/web/`).
 */
export function defaultWebAssetsDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const root = here.includes(`${sep}dist${sep}broker${sep}`) ? join(here, '..', '..', '..') : join(here, '..', '..');
  return join(root, 'dist', 'web');
}

/** A built file to send: its bytes, type, and whether its name carries a content hash (cached for ever). */
export interface Asset {
  body: Buffer;
  contentType: string;
  immutable: boolean;
}

/** The built console files under `dir`; a path that leaves it or names nothing is undefined. */
export class StaticAssets {
  constructor(readonly dir: string) {}

  get built(): boolean {
    return existsSync(join(this.dir, 'index.html'));
  }

  async read(urlPath: string): Promise<Asset | undefined> {
    const relative = urlPath === '/' ? 'index.html' : decodeURIComponent(urlPath).replace(/^\/+/, '');
    const file = normalize(join(this.dir, relative));
    if (!file.startsWith(this.dir + sep) || relative.includes('\0')) return undefined;
    const contentType = CONTENT_TYPES[extname(file)];
    if (!contentType) return undefined;
    try {
      return { body: await readFile(file), contentType, immutable: relative.startsWith('assets/') };
    } catch {
      return undefined;
    }
  }
}

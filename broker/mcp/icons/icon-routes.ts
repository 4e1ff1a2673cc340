import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ICON_DRAWINGS, svgDocument } from './icon-drawings.ts';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * `/icons/<name>.svg` for every domain and the product, served without a
 * bearer token (a client fetches them to draw its menus) behind the MCP
 * server's Host and Origin checks. They carry no fleet data. An icon only
 * changes with a release, so clients may keep it for a year; the ETag lets
 * them check. The CSP keeps a browser that opens one from running anything.
 */
export function createIconRoutes(): Record<string, Route> {
  const routes: Record<string, Route> = {};
  for (const [name, drawing] of ICON_DRAWINGS) {
    const body = svgDocument(drawing);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
    routes[`/icons/${name}.svg`] = (req, res) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' });
        res.end();
        return;
      }
      const headers = {
        'content-type': 'image/svg+xml',
        'cache-control': 'public, max-age=31536000, immutable',
        etag,
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'",
      };
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, headers);
        res.end();
        return;
      }
      res.writeHead(200, { ...headers, 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
  }
  return routes;
}

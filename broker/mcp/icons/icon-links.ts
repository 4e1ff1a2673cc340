import type { Icon } from '@modelcontextprotocol/server';
import { PRODUCT_ICON } from './icon-drawings.ts';

/**
 * The `icons` field of what MCP lists: the URL of a domain's icon on the
 * broker's `/icons/` route for its tools, resource templates and prompts, the
 * product's for the server and for what spans domains. URLs rather than data:
 * URIs, and no mimeType (the route answers image/svg+xml), because every tool
 * in tools/list pays for them (docs/tokens.json). Without an origin (no HTTP
 * request to build one from) nothing carries icons.
 */
export class IconLinks {
  /** `origin`: the request's (`http://` and its Host header, which the server checked) or the public URL's. */
  constructor(private readonly origin: string | undefined) {}

  /** `{ icons }` to spread into a listed item: `domain`'s icon, or the product's for undefined. */
  of(domain: string | undefined): { icons?: Icon[] } {
    return this.origin === undefined ? {} : { icons: [{ src: `${this.origin}/icons/${domain ?? PRODUCT_ICON}.svg` }] };
  }
}

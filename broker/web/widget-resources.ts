import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WidgetName } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { WIDGETS } from '../domains/broker-domains.ts';

/** The MIME type MCP Apps hosts render as a widget document. */
const WIDGET_MIME_TYPE = 'text/html;profile=mcp-app';
const PREFIX = 'ui://fleetmesh/';

/** The `ui://` resource that shows an action's answer. */
export function widgetUri(widget: WidgetName): string {
  return `${PREFIX}${widget}`;
}

/**
 * What tools/list says of a tool whose answer has a widget (`_meta.ui`, the
 * extension's current key; the older flat `ui/resourceUri` would cost every
 * client about 15 tokens more per tool for hosts that predate it).
 */
export function widgetToolMeta(widget: WidgetName): Record<string, unknown> {
  return { ui: { resourceUri: widgetUri(widget) } };
}

/**
 * The widgets as MCP Apps resources: one HTML document each, with the widget
 * bundle (`npm run build` puts it in dist/web/widgets) and its style inlined,
 * since a host renders the document with nothing else to fetch. The documents
 * hold no fleet data: they get it from the tool result their host hands them.
 */
export class WidgetResources {
  private bundle: { script: string; style: string } | undefined;

  constructor(private readonly assetsDir: string) {}

  list(): { uri: string; name: string; title: string; mimeType: string }[] {
    return WIDGETS.map(({ name, title }) => ({ uri: widgetUri(name), name: `widget-${name}`, title, mimeType: WIDGET_MIME_TYPE }));
  }

  /** The document of a `ui://fleetmesh/…` URI; not_found for any other. */
  read(uri: string): { uri: string; mimeType: string; text: string; _meta: Record<string, unknown> } {
    const name = uri.startsWith(PREFIX) ? uri.slice(PREFIX.length) : undefined;
    if (!name || !WIDGETS.some((widget) => widget.name === name))
      throw new FleetError('not_found', `no widget ${uri}`, { hint: 'resources/list lists the ui://fleetmesh/ widgets.' });
    const { script, style } = this.load();
    // A `</script` inside the bundle would end the element early.
    const text = [
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
      `<title>fleetmesh ${name}</title><style>${style.replace(/<\/style/gi, '<\\/style')}</style></head>`,
      `<body data-widget="${name}"><div id="app"></div><script type="module">${script.replace(/<\/script/gi, '<\\/script')}</script></body></html>`,
    ].join('');
    return { uri, mimeType: WIDGET_MIME_TYPE, text, _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } } };
  }

  private load(): { script: string; style: string } {
    if (!this.bundle) {
      const dir = join(this.assetsDir, 'widgets');
      try {
        this.bundle = { script: readFileSync(join(dir, 'widgets.js'), 'utf8'), style: readFileSync(join(dir, 'widgets.css'), 'utf8') };
      } catch (error) {
        throw new FleetError('unavailable', 'the widgets are not built', { hint: 'Run `npm run build` in the fleetmesh folder.', cause: error });
      }
    }
    return this.bundle;
  }
}

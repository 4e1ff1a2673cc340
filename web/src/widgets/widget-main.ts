import '../components/components.css';
import './widgets.css';
import { App } from '@modelcontextprotocol/ext-apps';
import type { CallTool, ToolAnswer } from '../call-tool.ts';
import { h, replace } from '../dom.ts';
import { fleetTableWidget } from './fleet-table-widget.ts';
import { logViewerWidget } from './log-viewer-widget.ts';
import { metricsChartWidget } from './metrics-chart-widget.ts';
import { recommendationsWidget } from './recommendations-widget.ts';
import type { Widget } from './widget.ts';

/**
 * Every widget the domains' broker halves declare, and the component it shows:
 * the fleet's own here, each domain's from its folder (`<domain>/*-widget.ts`
 * exporting `domainWidgets`, which vite gathers when it builds).
 */
const WIDGETS: Readonly<Record<string, () => Widget>> = Object.assign(
  {
    'fleet-table': fleetTableWidget,
    'metrics-chart': metricsChartWidget,
    'log-viewer': logViewerWidget,
    recommendations: recommendationsWidget,
  },
  ...Object.values(import.meta.glob<Record<string, () => Widget>>('./*/*-widget.ts', { eager: true, import: 'domainWidgets' })),
);

/** A tool's MCP result as the components read it (the same shape the console's API gives). */
function answerOf(result: { structuredContent?: unknown; isError?: boolean }): ToolAnswer {
  const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
  const error = result.isError ? (structured.error as ToolAnswer['error']) : undefined;
  return {
    structured,
    is_error: result.isError === true,
    ...(error ? { error } : {}),
    ...(structured.targets ? { targets: structured.targets as ToolAnswer['targets'] } : {}),
  };
}

/**
 * One widget document per `ui://fleetmesh/<name>` resource (the broker says which
 * in `data-widget`). It shows the tool result its host hands it, and reaches
 * back to tools only through the host (`tools/call` over postMessage), so the
 * caller's level and grants apply to every read it makes.
 */
async function main(): Promise<void> {
  const name = document.body.dataset.widget ?? '';
  const root = document.getElementById('app') as HTMLElement;
  const make = WIDGETS[name];
  if (!make) {
    replace(root, h('p', {}, `unknown widget ${name}`));
    return;
  }
  const widget = make();
  replace(root, widget.element);
  const app = new App({ name: `fleetmesh ${name}`, version: '1' }, {});
  const call: CallTool = async (tool, args) => answerOf(await app.callServerTool({ name: tool, arguments: args }));
  let input: Record<string, unknown> = {};
  app.ontoolinput = (params) => {
    input = (params.arguments ?? {}) as Record<string, unknown>;
  };
  app.ontoolresult = (params) => {
    root.dataset.rendered = 'true';
    widget.show(answerOf(params), { call, input });
  };
  await app.connect();
  new ResizeObserver(
    () => void app.sendSizeChanged({ width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight }).catch(() => {}),
  ).observe(document.body);
}

void main();

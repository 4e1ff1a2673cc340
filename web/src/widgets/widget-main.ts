import '../components/components.css';
import './widgets.css';
import type { CallTool, ToolAnswer } from '../call-tool.ts';
import { h, replace } from '../dom.ts';
import { AppChannel } from './app-channel.ts';
import { findResultsWidget } from './find-results-widget.ts';
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
    'find-results': findResultsWidget,
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
  let input: Record<string, unknown> = {};
  const channel = new AppChannel(
    { name: `fleetmesh ${name}`, version: '1' },
    {
      toolInput(args) {
        input = args;
      },
      toolResult(result) {
        root.dataset.rendered = 'true';
        widget.show(answerOf(result), { call, input, say: (text) => channel.sendMessage(text) });
      },
    },
  );
  const call: CallTool = async (tool, args) => answerOf(await channel.callTool(tool, args));
  await channel.connect();
  new ResizeObserver(() => channel.sizeChanged(document.documentElement.scrollWidth, document.documentElement.scrollHeight)).observe(document.body);
}

void main();

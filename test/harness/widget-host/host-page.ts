/// <reference lib="dom" />
// Runs in Chromium: an MCP Apps host built on the ext-apps package's host side
// (AppBridge), bundled by widget-host.ts. Tool calls a widget makes go to
// `hostCallTool`, which the test wires to a real MCP client of a real broker.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

type CallToolParams = { name: string; arguments?: Record<string, unknown> };
type CallToolResult = { content: unknown[]; structuredContent?: Record<string, unknown>; isError?: boolean };

interface HostWindow {
  hostCallTool(params: CallToolParams): Promise<CallToolResult>;
  hostMessage(text: string): Promise<void>;
  showWidget(html: string, args: Record<string, unknown>, result: CallToolResult): Promise<void>;
}

const host = window as unknown as HostWindow;

/** Renders one widget document in a sandboxed frame, hands it the call's arguments and result, and serves its tool calls. */
host.showWidget = async (html, args, result) => {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.style.width = '100%';
  frame.style.height = '480px';
  frame.style.border = '1px solid #ccc';
  document.body.replaceChildren(frame);
  const view = frame.contentWindow;
  if (!view) throw new Error('the frame has no window');
  const bridge = new AppBridge(null, { name: 'fleetmesh test host', version: '1.0.0' }, { serverTools: {} });
  bridge.oncalltool = async (params) => (await host.hostCallTool({ name: params.name, arguments: params.arguments ?? {} })) as never;
  bridge.onmessage = async (params) => {
    for (const block of params.content) if (block.type === 'text') await host.hostMessage(block.text);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${Math.min(height + 4, 1200)}px`;
  };
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  await bridge.connect(new PostMessageTransport(view, view));
  frame.srcdoc = html;
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result as never);
};

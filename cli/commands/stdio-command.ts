import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { FLEETMESH_VERSION } from '../../shared/version.ts';
import { BrokerLink } from '../broker-link.ts';
import { defineCommand } from '../command.ts';
import { lostAnswer } from '../lost-answer.ts';
import { connectToBroker, MCP_CLIENT_FLAGS, resolveToken } from '../mcp-client.ts';

export const stdioCommand = defineCommand({
  spec: {
    name: 'stdio',
    summary: 'An MCP server on stdio that relays to a broker, for clients that only speak stdio.',
    usage: 'fleetmesh stdio --url http://broker:7400/mcp --token T',
    details:
      'Tools, resources (with subscriptions), prompts, completion, progress and cancellation all pass through; nothing is cached. When the broker restarts, the relay opens a new session and subscribes again by itself. --url may list the brokers of a cluster, comma-separated: when one stops answering, the relay opens its session on the next. A call whose answer a stopping broker never sent is answered with an error result saying its outcome is unknown.',
    flags: { ...MCP_CLIENT_FLAGS },
  },
  async run(parsed) {
    const token = resolveToken(parsed.values);
    const urls = parsed.values.url
      .split(',')
      .map((url) => url.trim())
      .filter((url) => url !== '');
    let turn = 0;
    // The broker of the last session first, then each other one in turn.
    const open = async () => {
      let failure: unknown;
      for (let offset = 0; offset < urls.length; offset++) {
        const index = (turn + offset) % urls.length;
        try {
          const client = await connectToBroker(urls[index] as string, token, 'fleetmesh-stdio');
          turn = index;
          return client;
        } catch (error) {
          failure = error;
        }
      }
      throw failure;
    };
    const link = await BrokerLink.connect(open, (remote) => {
      remote.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => server.sendResourceUpdated(notification.params));
      remote.setNotificationHandler(ResourceListChangedNotificationSchema, () => server.sendResourceListChanged());
    });
    const remote = link.current;
    const version = remote.getServerVersion();
    const server = new Server(
      { name: version?.name ?? 'fleetmesh', version: version?.version ?? FLEETMESH_VERSION },
      { capabilities: remote.getServerCapabilities() ?? {}, ...(remote.getInstructions() ? { instructions: remote.getInstructions() } : {}) },
    );
    server.setRequestHandler(ListToolsRequestSchema, (request, extra) => link.request((r) => r.listTools(request.params, { signal: extra.signal })));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      // The broker's progress comes back with the relay's own token; the client's goes on the way out.
      const { _meta, ...params } = request.params;
      const progressToken = _meta?.progressToken;
      return link.request(
        (r) =>
          r.callTool(params, undefined, {
            signal: extra.signal,
            timeout: 120_000,
            ...(progressToken !== undefined
              ? {
                  // The broker's word that a long call still runs resets the timeout here too.
                  resetTimeoutOnProgress: true,
                  onprogress: (progress) => {
                    void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } });
                  },
                }
              : {}),
          }),
        // A call whose answer was lost may have run: it is not sent again, and the client hears that its outcome is unknown.
        () => lostAnswer(params.name),
      );
    });
    server.setRequestHandler(ListResourcesRequestSchema, (request, extra) => link.request((r) => r.listResources(request.params, { signal: extra.signal })));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) =>
      link.request((r) => r.listResourceTemplates(request.params, { signal: extra.signal })),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => link.request((r) => r.readResource(request.params, { signal: extra.signal })));
    server.setRequestHandler(SubscribeRequestSchema, (request, extra) =>
      link.subscribe(request.params.uri, (r) => r.subscribeResource(request.params, { signal: extra.signal })),
    );
    server.setRequestHandler(UnsubscribeRequestSchema, (request, extra) =>
      link.unsubscribe(request.params.uri, (r) => r.unsubscribeResource(request.params, { signal: extra.signal })),
    );
    server.setRequestHandler(ListPromptsRequestSchema, (request, extra) => link.request((r) => r.listPrompts(request.params, { signal: extra.signal })));
    server.setRequestHandler(GetPromptRequestSchema, (request, extra) => link.request((r) => r.getPrompt(request.params, { signal: extra.signal })));
    server.setRequestHandler(CompleteRequestSchema, (request, extra) => link.request((r) => r.complete(request.params, { signal: extra.signal })));

    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
      process.stdin.once('end', () => resolve());
    });
    await server.connect(transport);
    await closed;
    await link.close();
    return 0;
  },
});

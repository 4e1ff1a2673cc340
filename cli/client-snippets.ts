import { join } from 'node:path';

/** How one MCP client is configured for this broker: where the text goes, and the text. */
export interface ClientSnippet {
  client: 'Claude Code' | 'Claude Desktop' | 'VS Code' | 'Cursor';
  where: string;
  text: string;
}

/** What the snippets need: the endpoint, the token and the file holding it (absolute), and how to start this CLI. */
export interface SnippetPlace {
  url: string;
  token: string;
  tokenFile: string;
  /** The node binary and this package's root, for the stdio relay a desktop app starts from anywhere. */
  node: string;
  packageRoot: string;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * A working configuration per client, each in the format that client
 * documents: Claude Code's `claude mcp add` over HTTP with the header; Claude
 * Desktop's file, which takes stdio servers, through this CLI's stdio relay
 * started by absolute paths (the app starts it from no particular directory)
 * reading the token from its absolute file; VS Code's `servers` with a
 * `type`; Cursor's `mcpServers` with a url and headers.
 */
export function clientSnippets(place: SnippetPlace): ClientSnippet[] {
  const header = `Authorization: Bearer ${place.token}`;
  const headers = { Authorization: `Bearer ${place.token}` };
  return [
    {
      client: 'Claude Code',
      where: 'run in a shell',
      text: `claude mcp add --transport http fleetmesh ${place.url} --header "${header}"`,
    },
    {
      client: 'Claude Desktop',
      where: 'claude_desktop_config.json (Settings → Developer → Edit Config)',
      text: json({
        mcpServers: {
          fleetmesh: {
            command: place.node,
            args: [join(place.packageRoot, 'bin', 'fleetmesh.js'), 'stdio', '--url', place.url, '--token-file', place.tokenFile],
          },
        },
      }),
    },
    { client: 'VS Code', where: '.vscode/mcp.json', text: json({ servers: { fleetmesh: { type: 'http', url: place.url, headers } } }) },
    { client: 'Cursor', where: '~/.cursor/mcp.json', text: json({ mcpServers: { fleetmesh: { url: place.url, headers } } }) },
  ];
}

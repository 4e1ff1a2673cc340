import { writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentLaunchPlace } from '../cli/agent-launcher.ts';
import { type ClientSnippet, clientSnippets } from '../cli/client-snippets.ts';
import { identityToken } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

const byClient = (snippets: ClientSnippet[], client: ClientSnippet['client']) => snippets.find((s) => s.client === client) as ClientSnippet;

describe('a configuration snippet per MCP client', () => {
  let fleet: TestFleet;
  let snippets: ClientSnippet[];
  let token: string;

  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 3 });
    await fleet.addAgent('snip-1');
    token = await identityToken(fleet.broker, 3);
    const tokenFile = join(fleet.root, 'admin.token');
    writeFileSync(tokenFile, `${token}\n`);
    snippets = clientSnippets({ url: fleet.broker.mcpUrl, token, tokenFile, node: process.execPath, packageRoot: currentLaunchPlace().packageRoot });
  });
  afterAll(async () => {
    await fleet?.stop();
  });

  it("gives Claude Code its documented command: claude mcp add --transport http NAME URL --header 'Authorization: …'", () => {
    const { text } = byClient(snippets, 'Claude Code');
    const match = /^claude mcp add --transport http (\S+) (\S+) --header "([^"]+)"$/.exec(text);
    expect(match?.[1]).toBe('fleetmesh');
    expect(match?.[2]).toBe(fleet.broker.mcpUrl);
    expect(match?.[3]).toBe(`Authorization: Bearer ${token}`);
  });

  it('gives VS Code a servers entry with type http, and Cursor an mcpServers entry with url and headers', () => {
    const vscode = JSON.parse(byClient(snippets, 'VS Code').text);
    expect(Object.keys(vscode)).toEqual(['servers']);
    expect(vscode.servers.fleetmesh).toEqual({ type: 'http', url: fleet.broker.mcpUrl, headers: { Authorization: `Bearer ${token}` } });
    const cursor = JSON.parse(byClient(snippets, 'Cursor').text);
    expect(Object.keys(cursor)).toEqual(['mcpServers']);
    expect(cursor.mcpServers.fleetmesh).toEqual({ url: fleet.broker.mcpUrl, headers: { Authorization: `Bearer ${token}` } });
  });

  it('gives Claude Desktop a stdio server by absolute paths, and it works started from the root directory', async () => {
    const desktop = JSON.parse(byClient(snippets, 'Claude Desktop').text);
    expect(Object.keys(desktop)).toEqual(['mcpServers']);
    const server = desktop.mcpServers.fleetmesh as { command: string; args: string[] };
    expect(Object.keys(server).sort()).toEqual(['args', 'command']);
    expect(isAbsolute(server.command)).toBe(true);
    const tokenFile = server.args[server.args.indexOf('--token-file') + 1] as string;
    expect(isAbsolute(tokenFile)).toBe(true);
    // Started as the app starts it: that command, those arguments, from no particular directory.
    const client = new Client({ name: 'desktop-snippet', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: server.command, args: server.args, cwd: '/', stderr: 'ignore' }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('get_fleet_status');
      const status = await client.callTool({ name: 'get_fleet_status', arguments: {} });
      expect(status.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});

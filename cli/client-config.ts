/** The configuration block MCP clients take for a Streamable HTTP server with a bearer token. */
export function clientConfig(url: string, token: string): Record<string, unknown> {
  return {
    mcpServers: {
      fleetmesh: {
        type: 'http',
        url,
        headers: { Authorization: `Bearer ${token}` },
      },
    },
  };
}

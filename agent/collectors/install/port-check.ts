import { createServer } from 'node:net';
import { ContainerFacts } from '../../engine/container-facts.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { dgram } from '../../lazy-builtins.ts';

/** Whether this host lets a program listen on the port now (a taken port answers EADDRINUSE). */
function canListen(port: number, protocol: 'tcp' | 'udp'): Promise<boolean> {
  return new Promise((resolve) => {
    if (protocol === 'udp') {
      const socket = dgram().createSocket('udp4');
      socket.once('error', () => resolve(false));
      socket.bind(port, () => socket.close(() => resolve(true)));
      return;
    }
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code !== 'EADDRINUSE'));
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * Why each host port cannot be published, in words: a container publishes it
 * already, or something on the host listens there. (An agent in a container of
 * its own sees only the engine's side.)
 */
export async function portIssues(
  docker: Pick<EngineClient, 'listContainers'>,
  ports: readonly { host_port: number; protocol: 'tcp' | 'udp' }[],
): Promise<string[]> {
  const publishers = await new ContainerFacts(docker).publishedPorts();
  const issues: string[] = [];
  for (const port of ports) {
    const publisher = publishers.get(`${port.protocol}:${port.host_port}`);
    if (publisher) issues.push(`port ${port.host_port}/${port.protocol} is taken: container ${publisher} publishes it`);
    else if (!(await canListen(port.host_port, port.protocol)))
      issues.push(`port ${port.host_port}/${port.protocol} is taken: something on the host listens there`);
  }
  return issues;
}

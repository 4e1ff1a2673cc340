import { z } from 'zod';
import type { DomainParts } from '../domain-parts.ts';
import { dockerList } from './docker-actions.ts';

const publishedPortShape = z.object({
  ip: z.string().nullable(),
  public_port: z.number(),
  private_port: z.number(),
  protocol: z.string(),
});

type Port = z.infer<typeof publishedPortShape>;
type Container = { name: string; image: string; state: string; ports: Port[] };

function portText(port: Port): string {
  const address = port.ip && port.ip !== '0.0.0.0' && port.ip !== '::' ? `${port.ip}:` : '';
  return `${address}${port.public_port}→${port.private_port}/${port.protocol}`;
}

/** Each host's containers, volumes and local networks (bridge, host, macvlan…), as its engine lists them. */
export const dockerParts = {
  resourceTypes: {
    container: { scope: 'host', rank: 10 },
    volume: { scope: 'host', rank: 100 },
    local_network: { scope: 'host', rank: 105 },
  },
  inventory: {
    shape: {
      docker_version: z.string().nullable().describe('null when Docker could not be asked (see failed_collectors).'),
      containers: z.array(z.object({ name: z.string(), image: z.string(), state: z.string(), ports: z.array(publishedPortShape) })),
    },
    counts: { container_count: z.number().nullable() },
    columns: ['docker_version', 'container_count'],
    async scan(host) {
      const list = await host.run(dockerList, { all: true });
      const containers: Container[] =
        list.payload?.containers.map((c) => ({
          name: c.name,
          image: c.image,
          state: c.state,
          ports: c.ports.flatMap((p) =>
            p.public_port === null ? [] : [{ ip: p.ip, public_port: p.public_port, private_port: p.private_port, protocol: p.protocol }],
          ),
        })) ?? [];
      return {
        fields: { docker_version: typeof host.facts.docker_version === 'string' ? host.facts.docker_version : null, containers },
        counts: { container_count: list.payload ? containers.length : null },
        ...(list.payload ? {} : { failed: ['docker'], errors: list.errors.slice(0, 1) }),
      };
    },
    graph: () => (answer, draw) => {
      ((answer.containers as Container[] | undefined) ?? []).forEach((container, c) => {
        const id = `${draw.host}c${c}`;
        draw.node(id, `${container.name} (${container.image}, ${container.state})`, 'round');
        draw.edge(draw.host, id, '-->');
        // The engine lists a port once per address family: draw it once.
        [...new Set(container.ports.map(portText))].forEach((port, p) => {
          draw.node(`${id}p${p}`, port, 'stadium');
          draw.edge(id, `${id}p${p}`, '---');
        });
      });
    },
  },
} as const satisfies DomainParts;

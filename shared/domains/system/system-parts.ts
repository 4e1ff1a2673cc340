import { z } from 'zod';
import type { DomainParts } from '../domain-parts.ts';
import { reachableSockets } from './reachable-sockets.ts';
import { openPorts } from './system-actions.ts';

/** The host's own part of its inventory: what listens where other machines can reach it. */
export const systemParts = {
  inventory: {
    shape: {
      listening_ports: z
        .array(z.object({ protocol: z.string(), address: z.string(), port: z.number(), process: z.string().nullable() }))
        .describe('Sockets other machines can reach (not loopback).'),
    },
    columns: ['listening_ports'],
    async scan(host) {
      const ports = await host.run(openPorts, {});
      return {
        fields: {
          listening_ports: reachableSockets(ports.payload?.ports ?? []).map((p) => ({
            protocol: p.protocol,
            address: p.address,
            port: p.port,
            process: p.process,
          })),
        },
        ...(ports.payload ? {} : { failed: ['ports'], errors: ports.errors.slice(0, 1) }),
      };
    },
  },
} as const satisfies DomainParts;

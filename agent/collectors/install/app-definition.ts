import { z } from 'zod';

/** A compose-style duration: 30s, 1m30s, 500ms. */
const duration = z.string().regex(/^(\d+(ms|s|m|h))+$/, 'a duration such as 30s, 1m30s or 500ms');

/**
 * One app of the install catalog: a single compose service, in compose's own
 * words (`ports` as HOST:CONTAINER[/PROTOCOL], `volumes` as NAME:PATH, named
 * volumes only), plus a description and a category. The built-in catalog and
 * a site's --app-catalog files (YAML or JSON, one app each) use this shape.
 */
export const appDefinitionSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/)
      .describe('Also the container name; volumes are NAME-VOLUME.'),
    description: z.string().max(300),
    category: z.string().max(40).default('other'),
    image: z.string().min(1).max(256),
    command: z.array(z.string()).optional(),
    entrypoint: z.array(z.string()).optional(),
    environment: z.record(z.string(), z.string()).default({}),
    ports: z.array(z.string().regex(/^\d{1,5}:\d{1,5}(\/(tcp|udp))?$/, 'HOST:CONTAINER or HOST:CONTAINER/udp')).default([]),
    volumes: z.array(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*:\/[^:]*$/, 'NAME:/path (named volumes only)')).default([]),
    healthcheck: z
      .object({
        test: z.array(z.string()).min(1),
        interval: duration.optional(),
        timeout: duration.optional(),
        retries: z.number().int().min(1).max(100).optional(),
        start_period: duration.optional(),
      })
      .strict()
      .optional(),
    restart: z.enum(['no', 'always', 'unless-stopped', 'on-failure']).default('unless-stopped'),
  })
  .strict();

export type AppDefinition = z.infer<typeof appDefinitionSchema>;

/** A compose duration in nanoseconds, as the engine takes it. */
export function durationNs(text: string): number {
  let ns = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h)/g)) {
    ns += Number(amount) * { ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 }[unit as 'ms' | 's' | 'm' | 'h'];
  }
  return ns;
}

/** An app's ports as numbers. */
export function appPorts(app: AppDefinition): { host_port: number; container_port: number; protocol: 'tcp' | 'udp' }[] {
  return app.ports.map((port) => {
    const [pair, protocol] = port.split('/');
    const [host, container] = (pair as string).split(':');
    return { host_port: Number(host), container_port: Number(container), protocol: protocol === 'udp' ? 'udp' : 'tcp' };
  });
}

/** An app's volumes: the compose name, the engine's volume name (APP-NAME) and where it is mounted. */
export function appVolumes(app: AppDefinition): { name: string; volume: string; path: string }[] {
  return app.volumes.map((entry) => {
    const at = entry.indexOf(':');
    const name = entry.slice(0, at);
    return { name, volume: `${app.name}-${name}`, path: entry.slice(at + 1) };
  });
}

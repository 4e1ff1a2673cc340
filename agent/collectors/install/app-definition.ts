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

import { z } from 'zod';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { closestNames } from '../../../shared/format/closest-names.ts';
import entries from './helper-scripts.json' with { type: 'json' };

const helperScriptShape = z
  .object({
    id: z.string().regex(/^[a-z0-9-]+$/),
    title: z.string(),
    description: z.string(),
    category: z.string(),
    risk: z.enum(['read', 'write', 'destructive']),
    command: z.string(),
    notes: z.array(z.string()),
  })
  .strict();

type HelperScript = z.infer<typeof helperScriptShape>;

/** Where a person runs these commands; fleetmesh only hands out their text. */
export const RUNS_WHERE = 'a root shell on the Proxmox VE node (console or SSH); fleetmesh never runs it';

/**
 * The curated maintenance commands shipped with the agent (`helper-scripts.json`),
 * checked when the agent loads. They are data: nothing here fetches from the
 * network or runs a command.
 */
const HELPER_SCRIPTS: readonly HelperScript[] = z.array(helperScriptShape).parse(entries);

export function scriptCategories(): string[] {
  return [...new Set(HELPER_SCRIPTS.map((script) => script.category))].sort();
}

export function findScripts(filter: { category?: string; query?: string }): HelperScript[] {
  const category = filter.category?.toLowerCase();
  const query = filter.query?.toLowerCase();
  return HELPER_SCRIPTS.filter(
    (script) =>
      (category === undefined || script.category === category) &&
      (query === undefined || [script.id, script.title, script.description].some((text) => text.toLowerCase().includes(query))),
  );
}

export function scriptById(id: string): HelperScript {
  const script = HELPER_SCRIPTS.find((candidate) => candidate.id === id.toLowerCase());
  if (script) return script;
  const closest = closestNames(
    id,
    HELPER_SCRIPTS.map((candidate) => candidate.id),
  );
  throw new FleetError('not_found', `no helper script "${id.slice(0, 64)}"`, {
    collector: 'proxmox',
    hint: `${closest.length ? `Closest ids: ${closest.join(', ')}. ` : ''}proxmox_script_list lists every id.`,
    details: { closest },
  });
}

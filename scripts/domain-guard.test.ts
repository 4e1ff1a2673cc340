import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Domain } from '../shared/domains/domain.ts';
import type { DomainParts } from '../shared/domains/domain-parts.ts';
import { DOMAINS } from '../shared/domains/domains.ts';
import { beaconDomain } from '../test/fixtures/domain/shared/domains/beacon/beacon-domain.ts';
import { beaconParts } from '../test/fixtures/domain/shared/domains/beacon/beacon-parts.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The fixture domain's three folders mirror the tree's, under this folder. */
const FIXTURE = 'test/fixtures/domain/';

/** Every source file under a folder, but tests and generated registries (which list every domain by design). */
function sourcesUnder(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((entry) => {
    const path = `${dir}/${entry}`;
    if (statSync(join(root, path)).isDirectory()) return sourcesUnder(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.gen.ts') ? [path] : [];
  });
}

/** The shared code, both programs and the console, and the fixture domain's folders. */
const FILES = ['shared', 'agent', 'broker', 'cli', 'web/src', `${FIXTURE}shared`, `${FIXTURE}agent`, `${FIXTURE}broker`].flatMap(sourcesUnder);

const DECLARED: readonly Domain[] = [...DOMAINS, beaconDomain];
const NAMES = new Set(DECLARED.map((domain) => domain.name));

/** Each domain's resource types, from the parts file in its folder (as `npm run gen` finds it). */
async function typesByDomain(): Promise<Map<string, string[]>> {
  const types = new Map<string, string[]>([['beacon', Object.keys(beaconParts.resourceTypes)]]);
  for (const folder of readdirSync(join(root, 'shared/domains'))) {
    const file = join(root, 'shared/domains', folder, `${folder}-parts.ts`);
    if (!existsSync(file)) continue;
    const parts = (await import(file))[`${folder.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())}Parts`] as DomainParts;
    types.set(folder, Object.keys(parts.resourceTypes ?? {}));
  }
  return types;
}

/**
 * The domain a file belongs to: its folder of shared/domains/, agent/collectors/
 * or broker/domains/ (the fixture's under its own root), a folder of the console
 * named after it, or agent/actions/ (the agent's own actions). Undefined for
 * generic code.
 */
function ownerOf(path: string): string | undefined {
  const inTree = path.startsWith(FIXTURE) ? path.slice(FIXTURE.length) : path;
  if (inTree.startsWith('agent/actions/')) return 'agent';
  const folder = /^(?:shared\/domains|agent\/collectors|broker\/domains)\/([a-z0-9-]+)\//.exec(inTree)?.[1];
  if (folder) return folder;
  if (inTree.startsWith('web/src/'))
    return inTree
      .split('/')
      .slice(2, -1)
      .find((segment) => NAMES.has(segment));
  return undefined;
}

/**
 * The core: the broker's and the agent's own actions, which generic code may
 * use (fleet status reads the agents, a heartbeat carries agent_info's
 * figures). Every other domain is a plug-in that nothing outside it knows.
 */
const CORE = new Set(['agent', 'fleet']);

/** The Docker engine as a library of its own, which the docker, swarm and sandbox collectors and the index share. */
const ENGINE_LIBRARY = /^(?:agent|shared)\/engine\//;

interface Reach {
  /** The files reached into, as paths from the root. */
  into: readonly string[];
  /** Who may: domains, or `generic` code. */
  from: readonly string[];
  why: string;
}

/**
 * Where a file still reaches into a domain's folder from outside it, and why.
 * Each is a known debt with its way out; the test fails once one is no longer
 * needed, so the list only shrinks.
 */
const KNOWN: readonly Reach[] = [
  {
    into: ['shared/domains/backup/backup-head.ts', 'shared/domains/system/system-head.ts'],
    from: ['generic'],
    why: "the agent's options still resolve the backup folder and the host's /proc, which several collectors share",
  },
  {
    into: [
      'shared/domains/docker/docker-actions.ts',
      'shared/domains/system/system-actions.ts',
      'shared/domains/system/reachable-sockets.ts',
      'agent/collectors/backup/agent-backup-dir.ts',
    ],
    from: ['checkup'],
    why: "the check-up's report and doctor read the docker, system and backup collectors' answers; unlike the inventory and trust checks, their parts are not declared by those domains yet",
  },
];

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A file's relative imports, as paths from the root. */
function importsOf(path: string, text: string): string[] {
  return [...text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)].map((match) => normalize(join(dirname(path), match[1] as string)));
}

describe('the domains as plug-ins', () => {
  it("leave their action ids and report kinds to their own folders: other code reads the declarations (see-also lists, and the core's, aside)", () => {
    const names = DECLARED.flatMap((domain) => [
      ...domain.actions.map((action) => ({ domain: domain.name, name: action.id })),
      ...Object.keys(domain.reports).map((kind) => ({ domain: domain.name, name: kind })),
    ]);
    const patterns = names.map((entry) => ({ ...entry, pattern: new RegExp(`(?<![\\w.-])${literal(entry.name)}(?![\\w-])`) }));
    const found: string[] = [];
    let owned = 0;
    for (const file of FILES) {
      // `related` lists are links the catalog's readers drop when the action is not there.
      const text = readFileSync(join(root, file), 'utf8').replace(/related: \[[^\]]*\]/g, '');
      const owner = ownerOf(file);
      for (const { domain, name, pattern } of patterns) {
        if (!pattern.test(text)) continue;
        if (domain === owner) owned++;
        else if (!CORE.has(domain)) found.push(`${file} names ${name} (${domain})`);
      }
    }
    expect(found).toEqual([]);
    // The names are found where they belong (a collector sends its report kinds): the check does look.
    expect(owned).toBeGreaterThan(20);
  });

  it("leave their resource types out of generic code, which reads the types' declarations", async () => {
    const found: string[] = [];
    let owned = 0;
    for (const file of FILES) {
      const text = readFileSync(join(root, file), 'utf8');
      const owner = ownerOf(file);
      for (const [domain, types] of await typesByDomain()) {
        for (const type of types) {
          const quoted = `['"]${literal(type)}['"]`;
          // Where code declares or compares a type: `type: 'x'`, `type === 'x'`, `case 'x':`, `ofType('x')`, a prompt's `names`.
          const pattern = new RegExp(`(?:\\btype\\s*:|\\b(?:type|kind)\\s*[!=]==|\\bcase|\\bofType\\(|\\bnames\\s*:)\\s*${quoted}`);
          if (!pattern.test(text)) continue;
          // The engine library speaks of the engine's own objects (an event's type is `container`, `service`…), whose names the resource types share.
          if (owner === undefined && !ENGINE_LIBRARY.test(file)) found.push(`${file} names type ${type} (${domain})`);
          else owned++;
        }
      }
    }
    expect(found).toEqual([]);
    expect(owned).toBeGreaterThan(10);
  });

  it("import nothing of another domain's folders, and generic code nothing of a plug-in's, but the known debts", () => {
    const found: string[] = [];
    for (const file of FILES) {
      const owner = ownerOf(file);
      for (const target of importsOf(file, readFileSync(join(root, file), 'utf8'))) {
        const into = ownerOf(target);
        if (into === undefined || into === owner || CORE.has(into)) continue;
        found.push(`${owner ?? 'generic'}: ${file} -> ${target}`);
      }
    }
    const known = (line: string) =>
      KNOWN.find((reach) => reach.into.some((path) => line.endsWith(` -> ${path}`)) && reach.from.some((from) => line.startsWith(`${from}: `)));
    expect(found.filter((line) => !known(line))).toEqual([]);
    // A debt paid is struck from the list.
    for (const reach of KNOWN) {
      for (const path of reach.into)
        expect(
          found.some((line) => line.endsWith(` -> ${path}`)),
          `${path} is no longer reached into: strike it`,
        ).toBe(true);
    }
  });
});

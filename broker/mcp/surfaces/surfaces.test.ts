import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { domainOf } from '../../../shared/catalog/action.ts';
import { CATALOG } from '../../../shared/catalog/catalog.ts';
import { dockerStop } from '../../../shared/domains/docker/docker-actions.ts';
import { toFleetError } from '../../../shared/errors/fleet-error.ts';
import { type LinkedFleet, startLinkedFleet } from '../../../test/harness/linked-fleet.ts';
import { recordingStop } from '../../../test/harness/recording-stop.ts';
import { IconLinks } from '../icons/icon-links.ts';
import type { Resolution, SurfaceName } from './surface.ts';
import { SURFACES } from './surfaces.ts';
import { LONG_CALLS, LONG_MARK } from './tool-description.ts';

/** The call each surface takes for an action with these arguments (confirm apart from the rest). */
function callOn(surface: SurfaceName, action: (typeof CATALOG)[number], args: Record<string, unknown>): [string, Record<string, unknown>] {
  if (surface === 'individual') return [action.tool, args];
  const { confirm, ...params } = args;
  const within = surface === 'meta' ? action.id.slice(action.id.indexOf('.') + 1) : action.id;
  return [surface === 'meta' ? domainOf(action) : 'execute_action', { action: within, params, ...(confirm !== undefined ? { confirm } : {}) }];
}

const SURFACE_LIST: SurfaceName[] = ['individual', 'meta', 'dynamic'];

describe('tool surfaces', () => {
  it('each reach every action of the catalog with the same arguments', () => {
    const args = { host: 'web-1', confirm: true };
    const reached: Record<string, string[]> = {};
    for (const surface of SURFACE_LIST) {
      reached[surface] = CATALOG.map((action) => {
        const [tool, call] = callOn(surface, action, args);
        const resolution = SURFACES[surface].resolve(tool, call, CATALOG);
        return resolution.kind === 'action' && JSON.stringify(resolution.args) === JSON.stringify(args) ? resolution.action.id : `missed ${action.id}`;
      });
    }
    expect(reached.meta).toEqual(CATALOG.map((a) => a.id));
    expect(reached.dynamic).toEqual(reached.meta);
    expect(reached.individual).toEqual(reached.meta);
  });

  it('name the tool of an action the way they advertise it', () => {
    for (const surface of SURFACE_LIST) {
      const advertised = new Set(SURFACES[surface].tools(CATALOG, new IconLinks(undefined)).map((t) => t.name));
      const missing = CATALOG.filter((action) => !advertised.has(SURFACES[surface].toolFor(action))).map((a) => a.id);
      expect({ surface, missing }).toEqual({ surface, missing: [] });
    }
  });

  it("give every tool its domain's icon, the product's for a tool that spans domains, and none without an origin", () => {
    const icons = new IconLinks('https://fleet.example');
    const srcOf = (surface: SurfaceName) => Object.fromEntries(SURFACES[surface].tools(CATALOG, icons).map((t) => [t.name, t.icons?.map((i) => i.src)]));
    expect(srcOf('individual').docker_logs).toEqual(['https://fleet.example/icons/docker.svg']);
    expect(srcOf('meta').swarm).toEqual(['https://fleet.example/icons/swarm.svg']);
    expect(srcOf('dynamic')).toEqual({
      find_action: ['https://fleet.example/icons/fleetmesh.svg'],
      execute_action: ['https://fleet.example/icons/fleetmesh.svg'],
    });
    for (const surface of SURFACE_LIST) {
      expect(Object.entries(srcOf(surface)).filter(([, src]) => src?.length !== 1)).toEqual([]);
      expect(SURFACES[surface].tools(CATALOG, new IconLinks(undefined)).filter((t) => 'icons' in t)).toEqual([]);
    }
  });

  it('mark, in the description of a change that may wait long, that it is long; the instructions say once that such a change sends progress to a caller that asks for it', () => {
    const tools = SURFACES.individual.tools(CATALOG, new IconLinks(undefined));
    const descriptionOf = (tool: string) => tools.find((t) => t.name === tool)?.description ?? '';
    const found = SURFACES.dynamic.resolve('find_action', { query: 'stop container' }, CATALOG);
    expect(descriptionOf(dockerStop.tool).endsWith(` ${LONG_MARK}`)).toBe(true);
    expect(JSON.stringify(found)).toContain(LONG_MARK);
    expect(LONG_CALLS).toMatch(new RegExp(`^Changes marked ${LONG_MARK.replace('.', '\\.')} .*progressToken`));
    const waitless = CATALOG.filter((action) => !action.waitsMs || action.risk === 'read');
    expect(waitless.length).toBeGreaterThan(0);
    for (const action of waitless) expect(descriptionOf(action.tool).endsWith(` ${LONG_MARK}`)).toBe(false);
  });

  it('answer an unknown name with the closest ones', () => {
    const closest = (resolve: () => Resolution) => {
      try {
        return [resolve().kind];
      } catch (error) {
        const refusal = toFleetError(error);
        return [refusal.code, (refusal.details?.closest as string[] | undefined)?.[0]];
      }
    };
    expect({
      individual: closest(() => SURFACES.individual.resolve('docker_stopp', {}, CATALOG)),
      meta: closest(() => SURFACES.meta.resolve('docker', { action: 'stopp' }, CATALOG)),
      dynamic: closest(() => SURFACES.dynamic.resolve('execute_action', { action: 'docker.stopp' }, CATALOG)),
    }).toEqual({
      individual: ['not_found', 'docker_stop'],
      meta: ['not_found', 'stop'],
      dynamic: ['not_found', 'docker.stop'],
    });
  });

  it('refuse params that are not an object, and meta refuses keys beside action, params and confirm', () => {
    expect(() => SURFACES.meta.resolve('docker', { action: 'stop', params: [] }, CATALOG)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => SURFACES.meta.resolve('docker', { action: 'stop', host: 'web-1' }, CATALOG)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => SURFACES.dynamic.resolve('execute_action', { action: 'docker.stop', params: 'web-1' }, CATALOG)).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});

describe('tool surfaces over a linked fleet', () => {
  let fleet: LinkedFleet;
  const stopped: string[] = [];
  beforeEach(async () => {
    stopped.length = 0;
    fleet = await startLinkedFleet();
    await fleet.addHost('web-1', [recordingStop(stopped)]);
  });
  afterEach(() => fleet.stop());

  it('apply the same rules whichever surface resolved the call', async () => {
    const outcomes: Record<string, unknown[]> = {};
    for (const surface of SURFACE_LIST) {
      outcomes[surface] = [];
      for (const args of [
        { host: 'web-1', name: 'nginx' },
        { name: 'nginx', confirm: true },
        { host: 'web-1', name: 'nginx', confirm: true },
      ]) {
        const [tool, call] = callOn(surface, dockerStop, args);
        const resolution = SURFACES[surface].resolve(tool, call, CATALOG);
        if (resolution.kind !== 'action') throw new Error(`${surface} did not resolve ${tool}`);
        const result = await fleet.run(fleet.identity(1), resolution.action, resolution.args, { tool });
        const error = (result.structured.error as { code?: string } | undefined)?.code;
        outcomes[surface]?.push(error ?? result.structured.changed);
      }
    }
    expect(outcomes).toEqual({
      individual: ['confirm_required', 'invalid_argument', true],
      meta: ['confirm_required', 'invalid_argument', true],
      dynamic: ['confirm_required', 'invalid_argument', true],
    });
    expect(stopped).toEqual(['nginx', 'nginx', 'nginx']);
  });
});

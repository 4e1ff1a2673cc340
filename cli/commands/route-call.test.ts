import { describe, expect, it } from 'vitest';
import { toFleetError } from '../../shared/errors/fleet-error.ts';
import { type PublishedCatalog, routeCall } from './route-call.ts';

const actions = (tool: (id: string, name: string) => string) =>
  [
    { id: 'fleet.status', name: 'get_fleet_status' },
    { id: 'swarm.scale_service', name: 'scale_service' },
  ].map((a) => ({ ...a, tool: tool(a.id, a.name) }));

const individual: PublishedCatalog = { surface: 'individual', actions: actions((_, name) => name) };
const meta: PublishedCatalog = { surface: 'meta', actions: actions((id) => id.slice(0, id.indexOf('.'))) };
const dynamic: PublishedCatalog = { surface: 'dynamic', actions: actions(() => 'execute_action') };

function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    return toFleetError(error);
  }
  throw new Error('expected a refusal');
}

describe('routeCall', () => {
  it('calls the action by its tool name or its id the way each surface runs it', () => {
    const args = { service: 'web', replicas: 3, confirm: true };
    for (const wanted of ['scale_service', 'swarm.scale_service']) {
      expect(routeCall(individual, [], wanted, args)).toEqual({ name: 'scale_service', arguments: args });
      expect(routeCall(meta, [], wanted, args)).toEqual({
        name: 'swarm',
        arguments: { action: 'scale_service', params: { service: 'web', replicas: 3 }, confirm: true },
      });
      expect(routeCall(dynamic, [], wanted, args)).toEqual({
        name: 'execute_action',
        arguments: { action: 'swarm.scale_service', params: { service: 'web', replicas: 3 }, confirm: true },
      });
    }
    expect(routeCall(meta, [], 'get_fleet_status', {})).toEqual({ name: 'fleet', arguments: { action: 'status', params: {} } });
  });

  it("calls a surface's own tool as it is", () => {
    expect(routeCall(dynamic, ['find_action', 'execute_action'], 'find_action', { query: 'logs' })).toEqual({
      name: 'find_action',
      arguments: { query: 'logs' },
    });
  });

  it('refuses an unknown name with the closest ones', () => {
    const failure = refusal(() => routeCall(meta, ['fleet', 'swarm'], 'get_fleet_stats', {}));
    expect(failure.code).toBe('not_found');
    expect(failure.message).toContain('"get_fleet_stats"');
    expect(failure.hint).toMatch(/^Closest: get_fleet_status/);
  });
});

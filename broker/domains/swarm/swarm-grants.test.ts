import { describe, expect, it } from 'vitest';
import { getEvents, getLogs, scaleService } from '../../../shared/domains/swarm/swarm-actions.ts';
import { checkSwarmReadParams, filterSwarmAnswer, type SwarmReadScope } from './swarm-grants.ts';

/** A scope that sees service web only. */
const scope: SwarmReadScope = {
  whole: false,
  none: false,
  sees: (type, ref) => type === 'service' && ref === 'web',
  count: (type) => (type === 'service' ? 1 : 0),
};

describe('swarm reads under grants', () => {
  it("shows a partly visible swarm through the action's declared partial view", () => {
    const answer = { events: [{ type: 'service', id: 's2', name: 'db' }], count: 1 };
    expect(filterSwarmAnswer(getEvents, answer, scope)).toEqual({ events: [], count: 0 });
    expect(() => checkSwarmReadParams(getLogs, { service: 'db' }, scope, 'prod')).toThrow('no service "db" in swarm prod');
  });

  it('passes answers unchanged to an identity that sees the whole swarm, or for an action without a partial view', () => {
    const answer = { events: [{ type: 'service', id: 's2', name: 'db' }], count: 1 };
    expect(filterSwarmAnswer(getEvents, answer, { ...scope, whole: true })).toBe(answer);
    expect(filterSwarmAnswer(scaleService, answer, scope)).toBe(answer);
  });

  it('refuses any read of a swarm the identity sees nothing of', () => {
    expect(() => checkSwarmReadParams(getEvents, {}, { ...scope, none: true }, 'prod')).toThrow('no swarm is visible to this identity');
  });
});

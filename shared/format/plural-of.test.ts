import { describe, expect, it } from 'vitest';
import { find } from '../domains/fleet/index-actions.ts';
import { RESOURCE_TYPES } from '../domains/resource-types.ts';
import { pluralOf } from './plural-of.ts';

describe('pluralOf', () => {
  it('spells the plurals find accepts as a reader writes them', () => {
    expect(pluralOf('sandbox')).toBe('sandboxes');
    expect(pluralOf('service')).toBe('services');
    const accepted = (find.input.shape.type.unwrap() as unknown as { options: string[] }).options;
    expect(accepted).not.toContain('sandboxs');
    for (const type of RESOURCE_TYPES) expect(accepted).toContain(pluralOf(type));
  });
});

import { describe, expect, it } from 'vitest';
import { GrantSet } from '../auth/grants.ts';
import type { Identity } from '../auth/identities.ts';
import { visibleRelated } from './visible-related.ts';

const identity = (grants: string[]): Identity => ({ id: 'i', name: 'limited', level: 0, grants: new GrantSet(grants), expiresAt: Number.MAX_SAFE_INTEGER });

describe("a digest's related resources under grants", () => {
  const digest = {
    name: 'web',
    related: [
      { type: 'task', id: 't1', name: 'web.1', host: 'web-1' },
      { type: 'task', id: 't2', name: 'web.2', host: 'db-1' },
      { type: 'node', id: 'n1', name: 'node-a' },
      { type: 'secret', id: 's1', name: 'db-password' },
      { type: 'container', id: 'c1', name: 'web.1.abc', host: 'web-1' },
      { type: 'container', id: 'c2', name: 'web.2.def', host: 'db-1' },
    ],
  };

  it("keeps the service's tasks but names only the hosts the identity may see", () => {
    const seen = visibleRelated(identity(['service:web', 'host:web-*']), digest);
    expect(seen.related).toEqual([
      { type: 'task', id: 't1', name: 'web.1', host: 'web-1' },
      { type: 'task', id: 't2', name: 'web.2' },
      { type: 'container', id: 'c1', name: 'web.1.abc', host: 'web-1' },
    ]);
    expect(JSON.stringify(seen)).not.toContain('db-1');
  });

  it('leaves a full-access digest whole', () => {
    expect(visibleRelated(identity(['*:*']), digest)).toEqual(digest);
  });
});

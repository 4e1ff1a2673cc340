import { describe, expect, it } from 'vitest';
import { GrantSet } from './grants.ts';
import type { Identity } from './identities.ts';
import { mayRead, mayReadSome } from './visibility.ts';

const as = (...grants: string[]): Identity => ({ id: 'i', name: 'limited', level: 0, grants: new GrantSet(grants), expiresAt: Number.MAX_SAFE_INTEGER });

describe('mayRead', () => {
  it('lets a host grant see the host and what lives on it, and nothing of other hosts', () => {
    const web = as('host:web-1');
    expect(mayRead(web, { type: 'host', name: 'web-1' })).toBe(true);
    expect(mayRead(web, { type: 'container', name: 'nginx', host: 'web-1' })).toBe(true);
    expect(mayRead(web, { type: 'host', name: 'db-1' })).toBe(false);
    expect(mayRead(web, { type: 'container', name: 'nginx', host: 'db-1' })).toBe(false);
    expect(mayRead(web, { type: 'service', name: 'web' })).toBe(false);
  });

  it('lets a container grant see that container, not its host', () => {
    const one = as('container:web-1/nginx');
    expect(mayRead(one, { type: 'container', name: 'nginx', host: 'web-1' })).toBe(true);
    expect(mayRead(one, { type: 'container', name: 'redis', host: 'web-1' })).toBe(false);
    expect(mayRead(one, { type: 'host', name: 'web-1' })).toBe(false);
  });

  it("lets a service grant see the service's tasks and the stacks that hold it, not other services", () => {
    const svc = as('service:shop_web');
    expect(mayRead(svc, { type: 'service', name: 'shop_web' })).toBe(true);
    expect(mayRead(svc, { type: 'task', name: 'shop_web.1', parents: [{ type: 'service', name: 'shop_web' }] })).toBe(true);
    expect(mayRead(svc, { type: 'task', name: 'shop_db.1', parents: [{ type: 'service', name: 'shop_db' }] })).toBe(false);
    expect(mayRead(svc, { type: 'stack', name: 'shop', parents: ['shop_web', 'shop_db'].map((name) => ({ type: 'service', name })) })).toBe(true);
    expect(mayRead(svc, { type: 'stack', name: 'other', parents: [{ type: 'service', name: 'other_web' }] })).toBe(false);
    expect(mayRead(svc, { type: 'node', name: 'manager-1' })).toBe(false);
  });

  it('never lets a host-scoped thing without a host through', () => {
    expect(mayRead(as('container:*/nginx'), { type: 'container', name: 'nginx' })).toBe(false);
  });

  it('lets a grant on the host that reported a guest see it, and a guest grant see it from anywhere', () => {
    expect(mayRead(as('host:pve-a'), { type: 'guest', name: 'vm-1', host: 'pve-a' })).toBe(true);
    expect(mayRead(as('host:pve-b'), { type: 'guest', name: 'vm-1', host: 'pve-a' })).toBe(false);
    expect(mayRead(as('guest:vm-*'), { type: 'guest', name: 'vm-1', host: 'pve-a' })).toBe(true);
  });

  it('offers a type to an identity whose grants can show some of it, by the kinds its type declares', () => {
    expect(mayReadSome(as('service:web'), 'task')).toBe(true);
    expect(mayReadSome(as('host:web-1'), 'container')).toBe(true);
    expect(mayReadSome(as('host:web-1'), 'service')).toBe(false);
    expect(mayReadSome(as('*:*'), 'node')).toBe(true);
  });
});

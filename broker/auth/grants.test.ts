import { describe, expect, it } from 'vitest';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { GrantSet, parseGrant } from './grants.ts';

describe('grants', () => {
  it('parses KIND:PATTERN[=read|write], read by default, and refuses anything else', () => {
    expect(parseGrant(' host:web-* ')).toEqual({ kind: 'host', pattern: 'web-*', access: 'read', text: 'host:web-*' });
    expect(parseGrant('container:web-1/nginx*=write')).toMatchObject({ kind: 'container', access: 'write' });
    for (const text of ['hosts:web', 'host:', 'host:web=admin', 'web-1']) expect(() => parseGrant(text)).toThrow(FleetError);
  });

  it('lets write imply read, never the reverse', () => {
    const grants = new GrantSet(['host:web-*=write', 'host:db-1']);
    expect([grants.host('web-2'), grants.host('web-2', 'write')]).toEqual([true, true]);
    expect([grants.host('db-1'), grants.host('db-1', 'write')]).toEqual([true, false]);
    expect(grants.host('cache-1')).toBe(false);
    expect(grants.writesAnything()).toBe(true);
    expect(new GrantSet(['*:*']).writesAnything()).toBe(false);
  });

  it('matches globs whole and without regard to case', () => {
    const grants = new GrantSet(['host:web-?']);
    expect([grants.host('web-1'), grants.host('WEB-1'), grants.host('web-10'), grants.host('xweb-1')]).toEqual([true, true, false, false]);
  });

  it('covers what lives on a host with a host grant, and a container grant reaches only its host', () => {
    const grants = new GrantSet(['host:db-1', 'container:web-1/nginx*=write']);
    expect(grants.resource('container', 'db-1/redis')).toBe(true);
    expect(grants.resource('container', 'db-1/redis', 'write')).toBe(false);
    expect(grants.resource('container', 'web-1/nginx-2', 'write')).toBe(true);
    expect(grants.resource('container', 'web-1/redis')).toBe(false);
    expect([grants.reachesHost('web-1'), grants.host('web-1'), grants.reachesHost('web-2')]).toEqual([true, false, false]);
  });

  it('names a host-scoped resource by its own name when the pattern has no host part', () => {
    const grants = new GrantSet(['container:nginx']);
    expect([grants.resource('container', 'web-1/nginx'), grants.resource('container', 'web-2/nginx'), grants.resource('container', 'web-1/redis')]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('keeps swarm kinds apart: a service grant is no task grant', () => {
    const grants = new GrantSet(['service:web_*']);
    expect([grants.resource('service', 'web_api'), grants.resource('task', 'web_api.1'), grants.host('web_api')]).toEqual([true, false, false]);
    expect(new GrantSet(['*:*']).resource('task', 'anything')).toBe(true);
  });
});

import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { FactsSchema } from '../gen/fleetmesh/v1/mesh_pb.ts';
import { factsFromWire, factsToWire } from './facts-codec.ts';

describe('host facts on the wire', () => {
  it('come back under the same snake_case names, unstated ones left out, unknown ones not sent', () => {
    const record = { hostname: 'web-1', cpu_cores: 4, memory_total_bytes: 8 * 1024 ** 3, swarm_role: 'manager', proxmox_insecure: true, docker_version: '' };
    const wire = create(FactsSchema, factsToWire({ ...record, not_a_fact: 'x' }));
    expect(wire.memoryTotalBytes).toBe(BigInt(8 * 1024 ** 3));
    expect(factsFromWire(wire)).toEqual({ hostname: 'web-1', cpu_cores: 4, memory_total_bytes: 8 * 1024 ** 3, swarm_role: 'manager', proxmox_insecure: true });
  });

  it("carry a domain's declared facts as strings, and keep no undeclared name nor an overlong value", () => {
    const declared = new Set(['time_zone', 'motto']);
    const wire = create(FactsSchema, factsToWire({ hostname: 'web-1', time_zone: 'Europe/Paris', motto: 42, not_a_fact: 'x' }, declared));
    expect(wire.domainFacts).toEqual({ time_zone: 'Europe/Paris', motto: '42' });
    expect(factsFromWire(wire, declared)).toEqual({ hostname: 'web-1', time_zone: 'Europe/Paris', motto: '42' });
    const claimed = create(FactsSchema, { hostname: 'web-1', domainFacts: { time_zone: 'x'.repeat(1025), swarm_role: 'manager', sneaky: 'y', motto: '' } });
    expect(factsFromWire(claimed, declared)).toEqual({ hostname: 'web-1' });
  });
});

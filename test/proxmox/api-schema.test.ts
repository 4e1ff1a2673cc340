import { describe, expect, it } from 'vitest';
import { ApiSchema, checkValue } from './api-schema.ts';

const schema = ApiSchema.load();

describe('the Proxmox VE API schema checker', () => {
  it('knows the paths the collector calls, with the methods it uses', () => {
    expect(schema.size).toBeGreaterThan(400);
    for (const [method, path, template] of [
      ['GET', '/version', '/version'],
      ['GET', '/cluster/status', '/cluster/status'],
      ['GET', '/cluster/resources', '/cluster/resources'],
      ['GET', '/nodes/pve1/status', '/nodes/{node}/status'],
      ['GET', '/nodes/pve1/tasks', '/nodes/{node}/tasks'],
      [
        'GET',
        `/nodes/pve1/tasks/${encodeURIComponent('UPID:pve1:0000A1B2:00C0FFEE:6650F00D:qmstart:101:root@pam:')}/status`,
        '/nodes/{node}/tasks/{upid}/status',
      ],
      ['GET', '/nodes/pve1/tasks/x/log', '/nodes/{node}/tasks/{upid}/log'],
      ['POST', '/nodes/pve1/qemu/101/status/start', '/nodes/{node}/qemu/{vmid}/status/start'],
      ['POST', '/nodes/pve1/lxc/201/status/shutdown', '/nodes/{node}/lxc/{vmid}/status/shutdown'],
    ] as const) {
      const checked = schema.checkRequest(method, path, {});
      expect(checked.problems, `${method} ${path}`).toEqual([]);
      expect(checked.matched?.template).toBe(template);
    }
    expect(schema.match('/nodes/pve1/tasks/UPID%3Apve1%3A/status')?.variables).toEqual({ node: 'pve1', upid: 'UPID:pve1:' });
  });

  it('reports undocumented paths and methods, unknown parameters, wrong types and missing required parameters', () => {
    expect(schema.checkRequest('GET', '/nodes/pve1/guests', {}).problems).toEqual(['GET /nodes/pve1/guests: no such path in the API schema']);
    expect(schema.checkRequest('DELETE', '/version', {}).problems).toEqual(['DELETE /version: the path has no DELETE method in the API schema']);
    expect(schema.checkRequest('GET', '/cluster/resources', { kind: 'vm' }).problems).toEqual(['GET /cluster/resources: unknown parameter kind']);
    expect(schema.checkRequest('GET', '/cluster/resources', { type: 'guest' }).problems[0]).toMatch(/parameter type="guest" is not one of vm, storage, node/);
    expect(schema.checkRequest('POST', '/nodes/pve1/qemu/abc/status/start', {}).problems[0]).toMatch(/parameter vmid="abc" is not an integer/);
    expect(schema.checkRequest('POST', '/nodes/pve1/qemu/99/status/start', {}).problems[0]).toMatch(/vmid=99 is below the minimum 100/);
    expect(schema.checkRequest('GET', '/nodes/pve1/tasks', { errors: 'maybe' }).problems[0]).toMatch(/errors="maybe" is not a boolean/);
    expect(schema.checkRequest('POST', '/nodes/pve1/status', {}).problems).toEqual(['POST /nodes/{node}/status: required parameter command is missing']);
    expect(schema.checkRequest('GET', '/nodes/pve1/tasks', { limit: '10', errors: '1', source: 'all', vmid: '101', typefilter: 'vzdump' }).problems).toEqual(
      [],
    );
  });

  it('reports answers of another shape than documented, and accepts what Proxmox VE really sends', () => {
    expect(schema.checkReturns('GET', '/version', { version: '8.3.2', release: '8.3', repoid: '3e76eec21c4a14a7' })).toEqual([]);
    expect(schema.checkReturns('GET', '/version', { version: 8, release: '8.3', repoid: '3e76eec2', build: 'x' })).toEqual([
      'GET /version answer: data.version: expected a string, got 8',
      'GET /version answer: data.build: not documented',
    ]);
    expect(schema.checkReturns('GET', '/version', { release: '8.3', repoid: '3e76eec2' })[0]).toMatch(/data.version: missing/);
    expect(schema.checkReturns('GET', '/cluster/status', { nodes: [] })[0]).toMatch(/expected an array/);
    // Booleans as 1/0, as Proxmox VE's JSON writes them.
    expect(schema.checkReturns('GET', '/cluster/status', [{ type: 'node', id: 'node/pve1', name: 'pve1', online: 1, local: 0 }])).toEqual([]);
    expect(schema.checkReturns('GET', '/cluster/status', [{ type: 'host', id: 'x', name: 'x' }])[0]).toMatch(/data\[0\].type: expected one of cluster, node/);
    expect(schema.checkReturns('GET', '/cluster/resources', [{ id: 'qemu/101', type: 'qemu', vmid: 101.5 }])[0]).toMatch(/vmid: expected an integer/);
    expect(schema.checkReturns('POST', '/nodes/{node}/qemu/{vmid}/status/start', { upid: 'UPID:…' })[0]).toMatch(/expected a string/);
    // /nodes/{node}/status documents additionalProperties: fields it does not list (uptime, swap) are allowed there, and nowhere else.
    const nodeStatus = {
      cpu: 0.1,
      cpuinfo: { cores: 8, cpus: 16, model: 'x', sockets: 1 },
      loadavg: ['0.1', '0.2', '0.3'],
      memory: { total: 1, used: 1, free: 0, available: 0 },
      rootfs: { total: 1, used: 1, free: 0, avail: 0 },
      pveversion: 'pve-manager/8.3.2/3e76eec21c4a14a7',
      'current-kernel': { sysname: 'Linux', release: '6.8', version: '#1', machine: 'x86_64' },
      'boot-info': { mode: 'efi' },
      uptime: 5,
      swap: { total: 0, used: 0, free: 0 },
    };
    expect(schema.checkReturns('GET', '/nodes/{node}/status', nodeStatus)).toEqual([]);
    expect(schema.checkReturns('GET', '/nodes/{node}/status', { ...nodeStatus, memory: { ...nodeStatus.memory, cached: 3 } })[0]).toMatch(
      /data.memory.cached: not documented/,
    );
    expect(checkValue({ type: 'integer' }, '12')).toEqual(['data: expected an integer, got "12"']);
  });
});

import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PveSimulator, simulatorTokens } from './pve-simulator.ts';

/** A raw request as any client could send it, trusting the simulator's CA. */
function send(
  sim: PveSimulator,
  method: string,
  path: string,
  authorization: string | undefined,
  body = '',
): Promise<{ status: number; reason: string; json: { data: unknown; total?: number } | undefined }> {
  const url = new URL(`/api2/json${path}`, sim.endpoint('pve1'));
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        ca: sim.caPem,
        servername: 'localhost',
        headers: { ...(authorization ? { Authorization: authorization } : {}), ...(body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: { data: unknown } | undefined;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, reason: response.statusMessage ?? '', json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the PVE simulator', () => {
  const tokens = simulatorTokens();
  const header = (token: { id: string; secret: string }) => `PVEAPIToken=${token.id}=${token.secret}`;
  let sim: PveSimulator;

  beforeAll(async () => {
    sim = await PveSimulator.start({ tokens: Object.values(tokens), taskDurationMs: 50 });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('serves each node with its own certificate from the cluster CA', () => {
    expect(sim.fingerprint('pve1')).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(sim.fingerprint('pve1')).not.toBe(sim.fingerprint('pve2'));
  });

  it('checks the token in the Authorization header and what its ACLs allow', async () => {
    expect(await send(sim, 'GET', '/version', undefined)).toMatchObject({ status: 401, reason: 'No ticket' });
    expect(await send(sim, 'GET', '/version', `PVEAPIToken=${tokens.read.id}=wrong`)).toMatchObject({ status: 401, reason: 'authentication failure' });
    expect(await send(sim, 'GET', '/version', header(tokens.bare))).toMatchObject({ status: 200, json: { data: { version: '8.3.2' } } });
    expect(await send(sim, 'GET', '/cluster/status', header(tokens.bare))).toMatchObject({ status: 403, reason: 'Permission check failed (/, Sys.Audit)' });
    // /cluster/resources is open to every user and filtered: an unprivileged token sees an empty list, not an error.
    expect(await send(sim, 'GET', '/cluster/resources', header(tokens.bare))).toMatchObject({ status: 200, json: { data: [] } });
    expect(await send(sim, 'POST', '/nodes/pve1/qemu/101/status/reboot', header(tokens.read))).toMatchObject({
      status: 403,
      reason: 'Permission check failed (/vms/101, VM.PowerMgmt)',
    });
    const accepted = await send(sim, 'POST', '/nodes/pve1/qemu/101/status/reboot', header(tokens.power), 'timeout=10');
    expect(accepted).toMatchObject({
      status: 200,
      json: { data: expect.stringMatching(/^UPID:pve1:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:qmreboot:101:fleetmesh@pve!power:$/) },
    });
    expect(sim.violations).toEqual([]);
  });

  it('answers what the API does not document with 501 or 400, and records each as a violation', async () => {
    expect(await send(sim, 'GET', '/nodes/pve1/guests', header(tokens.read))).toMatchObject({ status: 501 });
    expect(await send(sim, 'GET', '/cluster/resources?kind=vm', header(tokens.read))).toMatchObject({ status: 400 });
    expect(await send(sim, 'POST', '/nodes/pve1/qemu/101/status/start', header(tokens.power), 'force=1')).toMatchObject({ status: 400 });
    // Documented, but nothing the collector calls: the simulator must not pretend.
    expect(await send(sim, 'GET', '/nodes', header(tokens.read))).toMatchObject({ status: 501 });
    expect(sim.violations).toEqual([
      'GET /nodes/pve1/guests: no such path in the API schema',
      'GET /cluster/resources: unknown parameter kind',
      'POST /nodes/{node}/qemu/{vmid}/status/start: unknown parameter force',
      'GET /nodes: documented, but the simulator does not implement it',
    ]);
    sim.violations.length = 0;
  });

  it('serves faults on demand, kept apart from violations', async () => {
    sim.inject({ template: '/version' }, { kind: 'garbage' }, 1);
    expect((await send(sim, 'GET', '/version', header(tokens.read))).json).toBeUndefined();
    expect((await send(sim, 'GET', '/version', header(tokens.read))).json).toMatchObject({ data: { release: '8.3' } });
    expect(sim.injected).toEqual(['garbage GET /version']);
    expect(sim.violations).toEqual([]);
  });
});

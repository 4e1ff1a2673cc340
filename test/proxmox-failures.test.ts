import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority } from '../shared/pki/certificates.ts';
import { waitFor } from './harness/wait.ts';
import { type PveTestFleet, startPveTestFleet } from './proxmox/pve-test-fleet.ts';

interface ErrorShape {
  code: string;
  message: string;
  hint: string;
  collector?: string;
}
interface Node {
  host: string;
  availability: string;
  failed_collectors: string[];
  errors: ErrorShape[];
  [key: string]: unknown;
}

const node = (result: { structuredContent: unknown }) => result.structuredContent as Node;
const firstError = (result: { structuredContent: unknown }) => node(result).errors[0] as ErrorShape;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('proxmox failure classes through MCP', () => {
  let pve: PveTestFleet;
  const facts = (name: string) => pve.fleet.broker.registry.list().find((host) => host.name === name)?.hello;
  /**
   * Adds an agent with an API token of its own and waits until its background
   * reads at start (node name, first guest inventory) are answered, so faults
   * aimed at its token and counts of its requests see only what a call asks.
   */
  const addSettled = async (name: string, setup: Parameters<PveTestFleet['addPveAgent']>[1]) => {
    const token = pve.sim.addToken(`fleetmesh@pve!${name}`, { audit: true, power: false });
    await pve.addPveAgent(name, { tokenFile: pve.tokenFile(`${name}.token`, pve.sim.tokenLine(token.id)), ...setup });
    await waitFor(() => facts(name)?.facts.proxmox_node, { what: `${name} to learn its node` });
    await waitFor(() => pve.sim.requestsTo('/cluster/resources', 'GET', token.id).some((request) => request.status !== 0), {
      what: `${name}'s first guest inventory`,
      timeoutMs: 30_000,
    });
    return token.id;
  };

  beforeAll(async () => {
    pve = await startPveTestFleet({ taskDurationMs: 100 });
  });
  afterAll(async () => {
    await pve?.stop();
  });

  it('configuration: a missing or malformed token file makes the collector unavailable, saying which file and why', async () => {
    const missingFile = join(pve.dir, 'missing.token');
    await pve.addPveAgent('cfg-missing', { tokenFile: missingFile });
    const missing = await pve.call('proxmox_status', { host: 'cfg-missing' });
    expect(missing.isError).toBe(true);
    expect(firstError(missing)).toMatchObject({
      code: 'collector_unavailable',
      collector: 'proxmox',
      message: `proxmox (configuration): the token file ${missingFile} (--proxmox-token-file) does not exist`,
    });
    expect(firstError(missing).hint).toMatch(/\(failure class: configuration\)$/);
    expect(facts('cfg-missing')?.collectors.find((c) => c.name === 'proxmox')).toMatchObject({ available: false, reason: firstError(missing).message });
    const fleet = await pve.call('get_fleet_status');
    expect(fleet.structuredContent.unavailable_collectors).toEqual(
      expect.arrayContaining([{ host: 'cfg-missing', collector: 'proxmox', reason: firstError(missing).message }]),
    );

    const malformed = pve.tokenFile('malformed.token', `${pve.tokens.read.secret}\n`);
    await pve.addPveAgent('cfg-malformed', { tokenFile: malformed });
    const result = await pve.call('proxmox_guests', { host: 'cfg-malformed' });
    expect(firstError(result).message).toBe(
      `proxmox (configuration): the token file ${malformed} (--proxmox-token-file) does not hold one line USER@REALM!TOKENID=SECRET`,
    );

    const noCa = join(pve.dir, 'missing-ca.pem');
    await pve.addPveAgent('cfg-ca', { caFile: noCa });
    expect(firstError(await pve.call('proxmox_node', { host: 'cfg-ca' })).message).toMatch(
      /^proxmox \(configuration\): the CA file .* cannot be read \(ENOENT\)$/,
    );
  });

  it('tls: a certificate whose fingerprint is not the pinned one is refused before anything is sent', async () => {
    await pve.addPveAgent('tls-pin', { node: 'pve1', fingerprint: pve.sim.fingerprint('pve2') });
    const before = pve.sim.requests.length;
    const result = await pve.call('proxmox_guests', { host: 'tls-pin' });
    expect(result.isError).toBe(true);
    expect(firstError(result)).toMatchObject({
      code: 'collector_unavailable',
      message: `proxmox (tls): the server presented a certificate with SHA-256 fingerprint ${pve.sim.fingerprint('pve1')}, not the pinned ${pve.sim.fingerprint('pve2')}; nothing was sent`,
    });
    expect(firstError(result).hint).toMatch(/pvenode cert info.*\(failure class: tls\)$/);
    expect(pve.sim.requests.length).toBe(before);
  });

  it('tls: a renewed certificate breaks a fingerprint pin, and not trust in the cluster CA', async () => {
    await addSettled('pinned-b', { node: 'pve2' });
    await addSettled('ca-b', { node: 'pve2', caFile: pve.file('cluster-ca.pem', pve.sim.caPem) });
    expect(node(await pve.call('proxmox_node', { host: 'pinned-b' })).node).toBe('pve2');
    const before = pve.sim.fingerprint('pve2');
    await pve.sim.rotateCertificate('pve2');
    const pinned = await pve.call('proxmox_node', { host: 'pinned-b' });
    expect(firstError(pinned).message).toContain(`not the pinned ${before}`);
    expect(firstError(pinned).message).toMatch(/^proxmox \(tls\)/);
    expect(node(await pve.call('proxmox_node', { host: 'ca-b' }))).toMatchObject({ availability: 'available', node: 'pve2' });
  });

  it('tls: a CA file of another CA, or no trust configured for a self-signed cluster, is refused', async () => {
    const foreign = await createCertificateAuthority({ commonName: 'Someone else', lifetimeMs: 86_400_000 });
    await pve.addPveAgent('tls-ca', { caFile: pve.file('foreign-ca.pem', foreign.certificatePem) });
    const wrongCa = await pve.call('proxmox_status', { host: 'tls-ca' });
    expect(firstError(wrongCa).message).toMatch(/^proxmox \(tls\): the server certificate \(SHA-256 [0-9A-F:]{95}\) is not trusted: .+; nothing was sent$/);
    expect(firstError(wrongCa).hint).toMatch(/pve-root-ca.pem/);
    await pve.addPveAgent('tls-system', { systemTrust: true, endpoint: pve.sim.endpoint('pve1').replace('127.0.0.1', 'localhost') });
    expect(firstError(await pve.call('proxmox_status', { host: 'tls-system' })).message).toMatch(/^proxmox \(tls\): the server certificate .* is not trusted/);
  });

  it('insecure mode works, and the fleet status names the host that skips TLS verification', async () => {
    await addSettled('insecure', { insecure: true });
    expect(node(await pve.call('proxmox_status', { host: 'insecure' }))).toMatchObject({ availability: 'available', answered_by_node: 'pve1' });
    expect(facts('insecure')?.facts.proxmox_insecure).toBe(true);
    const fleet = await pve.call('get_fleet_status');
    expect(fleet.structuredContent.insecure).toEqual([{ host: 'insecure', what: 'proxmox collector skips TLS verification (insecure mode)' }]);
  });

  it('authentication: a token the API does not know, and the rest of proxmox_status is not even tried', async () => {
    const wrong = pve.tokenFile('wrong-secret.token', `${pve.tokens.read.id}=00000000-1111-2222-3333-444444444444\n`);
    await pve.addPveAgent('auth', { tokenFile: wrong });
    const before = { version: pve.sim.requestsTo('/version').length, status: pve.sim.requestsTo('/cluster/status').length };
    const result = await pve.call('proxmox_status', { host: 'auth' });
    expect(result.isError).toBe(true);
    expect(firstError(result)).toMatchObject({
      code: 'forbidden',
      message: 'proxmox (authentication): the API does not accept the token fleetmesh@pve!read (401 "authentication failure")',
    });
    expect(firstError(result).hint).toMatch(/pveum user token list.*\(failure class: authentication\)$/);
    expect(pve.sim.requestsTo('/version').length).toBe(before.version + 1);
    // Its background discovery may have asked /cluster/status once at start; the call itself did not.
    expect(pve.sim.requestsTo('/cluster/status').length).toBeLessThanOrEqual(before.status + 1);
  });

  it('authorization: a 403, and an ACL-limited view that shows nothing, are failures and not empty answers', async () => {
    await pve.addPveAgent('bare', { tokenFile: pve.files.bare });
    const nodeStatus = await pve.call('proxmox_node', { host: 'bare', node: 'pve1' });
    expect(firstError(nodeStatus)).toMatchObject({
      code: 'forbidden',
      message: 'proxmox (authorization): the token fleetmesh@pve!bare may not GET /nodes/pve1/status (403 "Permission check failed (/nodes/pve1, Sys.Audit)")',
    });
    expect(firstError(nodeStatus).hint).toMatch(/PVEAuditor.*\(failure class: authorization\)$/);

    const guests = await pve.call('proxmox_guests', { host: 'bare' });
    expect(guests.isError).toBe(true);
    expect(node(guests).guests).toBeUndefined();
    expect(firstError(guests)).toMatchObject({
      code: 'forbidden',
      message: 'proxmox (authorization): the token fleetmesh@pve!bare sees nothing in /cluster/resources, although the node answering is there',
    });

    const status = await pve.call('proxmox_status', { host: 'bare' });
    expect(status.isError).toBeFalsy();
    expect(node(status)).toMatchObject({
      availability: 'partial',
      failed_collectors: ['cluster', 'resources'],
      version: { version: '8.3.2' },
      cluster: null,
      resources: null,
      answered_by_node: null,
    });
    expect(node(status).errors.map((e) => e.message.slice(0, 28))).toEqual(['proxmox (authorization): the', 'proxmox (authorization): the']);

    await pve.addPveAgent('no-power', { actionTokenFile: pve.files.read });
    const start = await pve.call('proxmox_guest_start', { host: 'no-power', node: 'pve1', type: 'lxc', vmid: 201, confirm: true });
    expect(firstError(start).message).toBe(
      'proxmox (authorization): the token fleetmesh@pve!read may not POST /nodes/pve1/lxc/201/status/start (403 "Permission check failed (/vms/201, VM.PowerMgmt)")',
    );
  });

  it('transport: nothing listening, and an API that does not answer in time, give up with the class', async () => {
    await pve.addPveAgent('refused', { endpoint: `https://127.0.0.1:${await closedPort()}` });
    const refused = await pve.call('proxmox_tasks', { host: 'refused', node: 'pve1' });
    expect(firstError(refused)).toMatchObject({ code: 'collector_unavailable' });
    expect(firstError(refused).message).toMatch(/^proxmox \(transport\): cannot connect to 127\.0\.0\.1:\d+: ECONNREFUSED$/);
    expect(firstError(refused).hint).toMatch(/systemctl status pveproxy.*\(failure class: transport\)$/);

    const slow = await addSettled('slow', { timeoutMs: 2000 });
    pve.sim.inject({ method: 'GET', template: '/version', tokenId: slow }, { kind: 'delay', ms: 8000 }, 1);
    const count = (template: string) => pve.sim.requestsTo(template, 'GET', slow).length;
    const before = { status: count('/cluster/status'), resources: count('/cluster/resources') };
    const timedOut = await pve.call('proxmox_status', { host: 'slow' });
    expect(timedOut.isError).toBe(true);
    expect(firstError(timedOut).message).toBe(`proxmox (transport): GET /version: no answer from ${pve.sim.endpoint('pve1')} within 2000 ms`);
    // The first part timed out: the others were skipped, not waited for one by one.
    expect(count('/cluster/status')).toBe(before.status);
    expect(count('/cluster/resources')).toBe(before.resources);

    pve.sim.inject({ method: 'GET', template: '/cluster/status', tokenId: slow }, { kind: 'delay', ms: 8000 }, 1);
    const partial = await pve.call('proxmox_status', { host: 'slow' });
    expect(node(partial)).toMatchObject({ availability: 'partial', failed_collectors: ['cluster', 'resources'], version: { release: '8.3' }, resources: null });
    expect(node(partial).errors).toHaveLength(1);
    expect(firstError(partial).message).toMatch(/^proxmox \(transport\): GET \/cluster\/status: no answer/);
    expect(count('/cluster/resources')).toBe(before.resources);
  });

  it('response: an answer that is not JSON, one of another shape, and one over the size bound', async () => {
    const odd = await addSettled('odd', {});
    pve.sim.inject({ method: 'GET', template: '/nodes/{node}/status', tokenId: odd }, { kind: 'garbage' }, 1);
    const garbage = await pve.call('proxmox_node', { host: 'odd' });
    expect(firstError(garbage)).toMatchObject({ code: 'collector_failed', message: 'proxmox (response): the answer to GET /nodes/pve1/status is not JSON' });
    expect(firstError(garbage).hint).toMatch(/\(failure class: response\)$/);

    pve.sim.inject({ method: 'GET', template: '/cluster/status', tokenId: odd }, { kind: 'misshape' }, 1);
    const misshapen = await pve.call('proxmox_status', { host: 'odd' });
    expect(node(misshapen)).toMatchObject({ availability: 'partial', failed_collectors: ['cluster'], cluster: null });
    expect(firstError(misshapen).message).toMatch(/^proxmox \(response\): the answer to GET \/cluster\/status does not have the documented shape at the top: /);

    pve.sim.inject({ method: 'GET', template: '/nodes/{node}/tasks', tokenId: odd }, { kind: 'status', status: 500, reason: 'got timeout' }, 1);
    const refused = await pve.call('proxmox_tasks', { host: 'odd' });
    expect(firstError(refused)).toMatchObject({ code: 'collector_failed', message: 'proxmox (response): GET /nodes/pve1/tasks failed: 500 "got timeout"' });

    await pve.addPveAgent('small', { maxResponseBytes: 2048 });
    const large = await pve.call('proxmox_guests', { host: 'small' });
    expect(firstError(large)).toMatchObject({
      code: 'collector_failed',
      message: 'proxmox (response): the answer to GET /cluster/resources is larger than 2048 bytes',
    });
  });

  it('tries a GET once more after a dropped connection, and never a POST', async () => {
    const flaky = await addSettled('flaky', { actionTokenFile: pve.files.power });
    pve.sim.inject({ method: 'GET', template: '/version', tokenId: flaky }, { kind: 'reset' }, 1);
    const versions = pve.sim.requestsTo('/version', 'GET', flaky).length;
    expect(node(await pve.call('proxmox_status', { host: 'flaky' }))).toMatchObject({ availability: 'available', failed_collectors: [] });
    expect(pve.sim.requestsTo('/version', 'GET', flaky).length).toBe(versions + 2);

    const template = '/nodes/{node}/qemu/{vmid}/status/start';
    pve.sim.inject({ method: 'POST', template }, { kind: 'reset' }, 1);
    const posts = pve.sim.requestsTo(template, 'POST').length;
    const tasks = pve.sim.cluster.tasks.length;
    const start = await pve.call('proxmox_guest_start', { host: 'flaky', node: 'pve2', type: 'qemu', vmid: 103, confirm: true });
    expect(start.isError).toBe(true);
    expect(firstError(start).message).toMatch(/^proxmox \(transport\): POST \/nodes\/pve2\/qemu\/103\/status\/start: the connection failed: ECONNRESET$/);
    expect(firstError(start).hint).toMatch(/^Whether Proxmox VE received the request is unknown, and it was not sent again/);
    expect(pve.sim.requestsTo(template, 'POST').length).toBe(posts + 1);
    expect(pve.sim.cluster.tasks.length).toBe(tasks);
    expect(pve.sim.cluster.guests.get(103)?.status).toBe('stopped');
  });

  it('never shows a token secret in a result or a log line, and every departure from the API was one the tests asked for', () => {
    const exposed = pve.exposed();
    for (const secret of pve.secrets()) expect(exposed).not.toContain(secret);
    expect(pve.sim.violations).toEqual([]);
    expect(pve.sim.injected).toEqual([
      'delay GET /version',
      'delay GET /cluster/status',
      'garbage GET /nodes/{node}/status',
      'misshape GET /cluster/status',
      'status GET /nodes/{node}/tasks',
      'reset GET /version',
      'reset POST /nodes/{node}/qemu/{vmid}/status/start',
    ]);
  });
});

import type { ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess } from './harness/cli-process.ts';
import { call, identityToken, mcpClient, text } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { createTestLan, type TestLan } from './harness/test-lan.ts';
import { waitFor } from './harness/wait.ts';

interface Device {
  ip: string;
  mac: string | null;
  hostname: string | null;
  status: string;
}

interface Node {
  host: string;
  availability: string;
  devices?: Device[];
  errors: { code: string }[];
}

/** Prints each datagram that reaches UDP port 9 in the namespace, as hex, once bound. */
const LISTENER = `
const socket = require('node:dgram').createSocket('udp4');
socket.on('message', (message) => process.stdout.write(message.toString('hex') + '\\n'));
socket.bind(9, '0.0.0.0', () => process.stdout.write('ready\\n'));
`;

/** Answers a PTR query on UDP port 5353 with the name nas.local, as an mDNS responder answers a unicast query. */
const MDNS_RESPONDER = `
const socket = require('node:dgram').createSocket('udp4');
socket.on('message', (query, peer) => {
  const header = Buffer.from(query.subarray(0, 12));
  header.writeUInt16BE(0x8400, 2);
  header.writeUInt16BE(1, 6);
  const name = Buffer.from([3, 110, 97, 115, 5, 108, 111, 99, 97, 108, 0]);
  const record = Buffer.alloc(10);
  record.writeUInt16BE(12, 0);
  record.writeUInt16BE(1, 2);
  record.writeUInt32BE(120, 4);
  record.writeUInt16BE(name.length, 8);
  socket.send(Buffer.concat([header, query.subarray(12), Buffer.from([0xc0, 12]), record, name]), peer.port, peer.address);
});
socket.bind(5353, '0.0.0.0', () => process.stdout.write('ready\\n'));
`;

describe('network scan and Wake-on-LAN on namespaces the test made', () => {
  let lan: TestLan;
  let fleet: TestFleet;
  let client: Client;
  const children: ChildProcess[] = [];
  const processes: CliProcess[] = [];

  beforeAll(async () => {
    lan = createTestLan(2);
    const [nas] = lan.hosts;
    fleet = await startTestFleet({ operationsLevel: 3, services: { wake: [{ name: 'nas', mac: nas?.mac ?? '', broadcast: lan.broadcast }] } });
    // The agents start after the LAN exists, so their Hello names its subnet.
    // No reverse DNS: the scans' traffic stays on the test LAN.
    await fleet.addAgent('lan-1', { collectors: 'default', scanReverseDns: false });
    await fleet.addAgent('lan-2', { collectors: 'default', scanReverseDns: false });
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
  });
  afterAll(async () => {
    for (const child of children) child.kill();
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await client?.close();
    await fleet?.stop();
    lan?.remove();
  });

  it('finds the test hosts with their MACs and mDNS names, and only within a subnet of the host', async () => {
    const [nas] = lan.hosts;
    if (!nas) throw new Error('no test host');
    const responder = lan.runIn(nas, MDNS_RESPONDER);
    children.push(responder);
    let ready = '';
    responder.stdout?.on('data', (data: Buffer) => {
      ready += data.toString();
    });
    await waitFor(() => ready.includes('ready'), { what: 'the mDNS responder bound' });
    const result = await call(client, 'network_scan', { host: 'lan-1', subnet: lan.subnet });
    expect(result.isError).toBeFalsy();
    const devices = result.structuredContent.devices as Device[];
    expect(result.structuredContent.subnets).toEqual([lan.subnet]);
    expect(devices).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ ip: lan.gateway, status: 'self' }),
        ...lan.hosts.map((host) => expect.objectContaining({ ip: host.ip, mac: host.mac, status: 'up' })),
      ]),
    );
    expect(devices.find((device) => device.ip === nas.ip)?.hostname).toBe('nas.local');
    expect(devices.find((device) => device.ip === lan.hosts[1]?.ip)?.hostname).toBeNull();
    expect(devices.every((device) => device.ip.startsWith(lan.gateway.slice(0, lan.gateway.lastIndexOf('.'))))).toBe(true);
    expect(text(result)).toContain(lan.hosts[0]?.mac);

    const outside = await call(client, 'network_scan', { host: 'lan-1', subnet: '203.0.113.0/24' });
    expect(outside.isError).toBe(true);
    expect(outside.structuredContent).toMatchObject({ errors: [{ code: 'invalid_argument' }] });
    expect(text(outside)).toMatch(/not within a subnet of this host/);
  });

  it("wakes a configured machine: an agent on its segment sends the magic packet to the target's namespace", async () => {
    const [nas] = lan.hosts;
    if (!nas) throw new Error('no test host');
    const listener = lan.runIn(nas, LISTENER);
    children.push(listener);
    let output = '';
    listener.stdout?.on('data', (data: Buffer) => {
      output += data.toString();
    });
    await waitFor(() => output.includes('ready'), { what: 'the listener bound' });

    const result = await call(client, 'wake', { target: 'nas' });
    expect(result.isError, text(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      target: 'nas',
      mac: nas.mac,
      broadcast: lan.broadcast,
      sent_by: 'lan-1',
      sent_by_subnet: lan.subnet,
      bytes: 102,
    });
    const packet = await waitFor(() => output.split('\n').find((line) => line.length === 204), { what: 'the magic packet' });
    expect(packet).toBe(`${'ff'.repeat(6)}${nas.mac.replace(/:/g, '').repeat(16)}`);

    // A MAC on a segment no agent is on is refused, not sent somewhere else.
    const nowhere = await call(client, 'wake', { target: '02:00:00:00:00:99', broadcast: '203.0.113.255' });
    expect(nowhere.isError).toBe(true);
    expect(text(nowhere)).toMatch(/no online agent you may use is on the segment/);
  });

  it('chooses the sender only among the agents the caller may change, whatever the others claim', async () => {
    const [, desk] = lan.hosts;
    if (!desk) throw new Error('no test host');
    const narrow = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1, ['host:*=read', 'host:lan-2=write']));
    const result = await call(narrow, 'wake', { target: desk.mac.toUpperCase(), broadcast: lan.broadcast });
    expect(result.structuredContent).toMatchObject({ mac: desk.mac, sent_by: 'lan-2' });
    const readOnly = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1, ['host:*=read']));
    const refused = await call(readOnly, 'wake', { target: desk.mac, broadcast: lan.broadcast });
    expect(refused.isError).toBe(true);
    // A caller that may change no host does not even see wake.
    expect(text(refused)).toMatch(/unknown tool: wake/);
    await narrow.close();
    await readOnly.close();
  });

  it('scans fleet-wide with a host killed mid-call reported and the others answering', async () => {
    const doomed = new CliProcess(await fleet.agentArgs('doomed'), { env: { FLEETMESH_SCAN_REVERSE_DNS: 'false' } });
    processes.push(doomed);
    await waitFor(() => fleet.broker.registry.find('doomed')?.state === 'online', { what: 'doomed online', timeoutMs: 30_000 });
    const pending = call(client, 'network_scan', { subnet: lan.subnet });
    await waitFor(() => (fleet.broker.registry.find('doomed')?.session?.inFlight ?? 0) > 0, { what: 'the scan reaching doomed' });
    doomed.signal('SIGKILL');
    const result = await pending;
    const envelope = result.structuredContent as { targeted: number; responded: number; hosts: Node[] };
    expect(envelope.targeted).toBe(3);
    expect(envelope.responded).toBe(2);
    const byHost = Object.fromEntries(envelope.hosts.map((node) => [node.host, node]));
    expect(byHost.doomed).toMatchObject({ availability: 'unavailable', errors: [{ code: 'agent_disconnected' }] });
    for (const name of ['lan-1', 'lan-2']) {
      expect(byHost[name]?.availability).toBe('available');
      expect(byHost[name]?.devices?.map((d) => d.ip)).toEqual(expect.arrayContaining(lan.hosts.map((h) => h.ip)));
    }
  });
});

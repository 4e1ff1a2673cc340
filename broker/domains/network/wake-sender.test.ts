import { describe, expect, it } from 'vitest';
import { sendMagicPacket } from '../../../shared/domains/network/network-actions.ts';
import { NETWORKS_FACT } from '../../../shared/domains/network/network-head.ts';
import type { Host } from '../../agents/agent-registry.ts';
import { chooseWakeSender } from './wake-sender.ts';
import { normalizeMac, parseWakeTargets } from './wake-targets.ts';

function host(name: string, networks: string, online = true): Host {
  return {
    name,
    session: online ? { isOpen: true } : undefined,
    hello: { actions: [sendMagicPacket.id], facts: { [NETWORKS_FACT]: networks } },
  } as unknown as Host;
}

describe('choosing the agent that sends a magic packet', () => {
  it("picks the online agent whose subnet holds the target's broadcast address", () => {
    const permitted = [host('office', '10.1.0.5/24,172.17.0.1/16'), host('lab', '10.2.0.9/24'), host('lab-down', '10.2.0.10/24', false)];
    expect(chooseWakeSender(permitted, '10.2.0.255')).toMatchObject({ host: { name: 'lab' }, subnet: { network: '10.2.0.0', prefix: 24 } });
    expect(chooseWakeSender(permitted, '10.1.0.255').host.name).toBe('office');
  });

  it('finds no sender on a segment no permitted agent is on, whatever other agents claim', () => {
    expect(() => chooseWakeSender([host('office', '10.1.0.5/24')], '192.168.9.255')).toThrow(/no online agent you may use/);
  });

  it('needs a broadcast address when several agents could send the limited broadcast', () => {
    expect(chooseWakeSender([host('only', '10.1.0.5/24')], '255.255.255.255')).toMatchObject({ host: { name: 'only' }, subnet: null });
    expect(() => chooseWakeSender([host('a', '10.1.0.5/24'), host('b', '10.2.0.5/24')], '255.255.255.255')).toThrow(/does not say which segment/);
  });
});

describe('wake targets', () => {
  it('reads NAME=MAC[@BROADCAST] and normalizes the MAC', () => {
    expect(parseWakeTargets(['nas=AA-BB-CC-DD-EE-0F@192.168.1.255', 'desk=aabbccddeeff'])).toEqual([
      { name: 'nas', mac: 'aa:bb:cc:dd:ee:0f', broadcast: '192.168.1.255' },
      { name: 'desk', mac: 'aa:bb:cc:dd:ee:ff', broadcast: undefined },
    ]);
    expect(normalizeMac('not-a-mac')).toBeUndefined();
    expect(() => parseWakeTargets(['nas=aa:bb:cc:dd:ee:ff@somewhere'])).toThrow(/--wake-target/);
  });
});

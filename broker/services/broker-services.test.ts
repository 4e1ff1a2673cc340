import { describe, expect, it } from 'vitest';
import { DOMAIN_BROKER_FLAGS, type DomainBrokerFlagValues } from '../../shared/domains/domains.ts';
import { networkDomain } from '../../shared/domains/network/network-domain.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import { wakeService } from '../domains/network/wake-service.ts';
import { notifyService } from '../domains/notify/notify-service.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import { defineBrokerService } from './broker-service.ts';
import { BrokerServices, resolveServiceOptions } from './broker-services.ts';

/** The domains' broker flags as the command line gives them when none is set. */
function defaults(): DomainBrokerFlagValues {
  const unset = Object.fromEntries(Object.keys(DOMAIN_BROKER_FLAGS).map((flag) => [flag, undefined]));
  return { ...unset, 'wake-target': [], 'notify-offline-after': 300_000, 'notify-repeat-after': 1_800_000 } as unknown as DomainBrokerFlagValues;
}

const context = { registry: {} as AgentRegistry, index: {} as FleetIndex, log: silentLogger };

describe('broker services', () => {
  it("take their options from the broker flags their domains declare, and a bad value stops the broker's options", () => {
    expect(Object.keys(DOMAIN_BROKER_FLAGS)).toEqual(expect.arrayContaining(['wake-target', 'notify-webhook']));
    const options = resolveServiceOptions({ ...defaults(), 'wake-target': ['nas=AA-BB-CC-DD-EE-FF@192.168.1.255'] });
    expect(options.wake).toEqual([{ name: 'nas', mac: 'aa:bb:cc:dd:ee:ff', broadcast: '192.168.1.255' }]);
    expect(options.notify).toMatchObject({ channels: [] });
    expect(() => resolveServiceOptions({ ...defaults(), 'wake-target': ['nas'] })).toThrow(/--wake-target "nas"/);
  });

  it('run with their defaults when not configured, each found by its plugin, and are stopped with the broker', () => {
    const stopped: string[] = [];
    const clock = defineBrokerService({
      name: 'clock',
      domain: networkDomain,
      options: () => 0,
      defaults: 5,
      start: (offsetMs) => ({ offsetMs }),
      stop: (service) => stopped.push(`clock ${service.offsetMs}`),
    });
    const services = new BrokerServices({ wake: [{ name: 'nas', mac: 'aa:bb:cc:dd:ee:ff', broadcast: undefined }] }, context, [wakeService, clock]);
    expect(services.get(wakeService).targets.map((t) => t.name)).toEqual(['nas']);
    expect(services.get(clock).offsetMs).toBe(5);
    expect(() => services.get(notifyService)).toThrow(/notify is not running/);
    services.stop();
    expect(stopped).toEqual(['clock 5']);
  });
});

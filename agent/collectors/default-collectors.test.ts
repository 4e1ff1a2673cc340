import { afterEach, describe, expect, it } from 'vitest';
import { loadAction } from '../../shared/domains/domain-heads.ts';
import { DOMAINS } from '../../shared/domains/domains.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { makeTempDir } from '../../test/harness/temp-dir.ts';
import { TEST_AGENT_DEFAULTS } from '../../test/harness/test-agent-defaults.ts';
import type { AgentOptions } from '../agent-options.ts';
import { Dispatcher } from '../dispatcher/dispatcher.ts';
import type { SystemSampler } from '../sampler/system-sampler.ts';
import { COLLECTOR_PLUGINS } from './collector-plugins.gen.ts';
import { defaultCollectors } from './default-collectors.ts';

describe('the default collectors', () => {
  const temps: { remove(): void }[] = [];
  afterEach(() => {
    for (const temp of temps.splice(0)) temp.remove();
  });

  function made(contributors: unknown[] = []) {
    const temp = makeTempDir();
    temps.push(temp);
    const options: AgentOptions = {
      dataDir: temp.path,
      brokerAddress: undefined,
      token: undefined,
      caPin: undefined,
      name: 'h1',
      ...TEST_AGENT_DEFAULTS,
    };
    const sampler = { addContributor: (c: unknown) => contributors.push(c), onSample: () => undefined } as unknown as SystemSampler;
    const hooks = { report: () => undefined, onAvailabilityChange: () => undefined, onFactsChange: () => undefined };
    return defaultCollectors(options, sampler, silentLogger, hooks);
  }

  it('are one per collector folder, made once each, in their domains’ order', () => {
    const contributors: unknown[] = [];
    const collectors = made(contributors);
    const ranked = DOMAINS.map((domain) => domain.name).filter((name) => COLLECTOR_PLUGINS.some((plugin) => plugin.domain.name === name));
    expect(collectors.map((collector) => collector.name)).toEqual(ranked);
    // Only the docker collector adds figures to every heartbeat (container counts), and once: no collector makes another.
    expect(contributors).toHaveLength(1);
  });

  it('serve only actions their domains declare, by id: each declaration loads with its domain when a call comes', async () => {
    const dispatcher = new Dispatcher(silentLogger);
    for (const collector of made()) collector.register(dispatcher);
    const served = dispatcher.actions();
    expect(served.length).toBeGreaterThan(80);
    for (const id of served) expect(await loadAction(id), `${id} is served by a collector but declared by no domain`).toBeDefined();
  });
});

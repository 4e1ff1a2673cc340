import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { captureLogger } from './harness/capture-logger.ts';
import { CliProcess } from './harness/cli-process.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

/**
 * The skew policy (CHANGELOG.md, README "Upgrading") between a real agent
 * process of this checkout's version and an in-process broker that reports
 * another version: the broker's version is the one value replaced here, so
 * one checkout can play both an upgraded broker and an older agent.
 */
const brokerVersion = vi.hoisted(() => ({ value: '' }));
vi.mock('../shared/version.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../shared/version.ts')>();
  return {
    ...actual,
    get FLEETMESH_VERSION() {
      return brokerVersion.value || actual.FLEETMESH_VERSION;
    },
  };
});

/** The agent processes' version: this checkout's. */
const agentVersion = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const [major, minor] = agentVersion.split('.').map(Number) as [number, number];

describe('agents and brokers of different versions', () => {
  let fleet: TestFleet | undefined;
  let agent: CliProcess | undefined;
  afterEach(async () => {
    await agent?.stop();
    await fleet?.stop();
    agent = undefined;
    fleet = undefined;
    brokerVersion.value = '';
  });

  it('serves an agent one minor version behind the broker', async () => {
    brokerVersion.value = `${major}.${minor + 1}.3`;
    fleet = await startTestFleet();
    agent = new CliProcess(await fleet.agentArgs('one-behind'));
    await waitFor(() => fleet?.broker.registry.find('one-behind')?.state === 'online', { timeoutMs: 30_000, what: 'the agent one minor behind online' });
    expect(fleet.broker.registry.find('one-behind')?.version).toBe(agentVersion);
  });

  it('tells an agent two minor versions behind, in its own log, which versions the broker serves and what to install, and never serves it', async () => {
    const { log, lines } = captureLogger();
    brokerVersion.value = `${major}.${minor + 2}.0`;
    fleet = await startTestFleet({ log });
    agent = new CliProcess(await fleet.agentArgs('two-behind'));
    const told = `agent version ${agentVersion} is too old for broker ${major}.${minor + 2}.0, which serves agents ${major}.${minor + 1}.x or ${major}.${minor + 2}.x (at most one minor version behind): upgrade this agent to ${major}.${minor + 2}.x`;
    await agent.waitForOutput(new RegExp(told.replace(/[.()]/g, '\\$&')));
    expect(lines).toContainEqual(expect.objectContaining({ message: 'agent stream refused', reason: told }));
    expect(fleet.broker.registry.find('two-behind')?.state).not.toBe('online');
  });

  it('serves an agent newer than its broker, and the broker logs that it should be upgraded first', async () => {
    const { log, lines } = captureLogger();
    brokerVersion.value = minor > 0 ? `${major}.${minor - 1}.0` : `${major - 1}.9.0`;
    fleet = await startTestFleet({ log });
    agent = new CliProcess(await fleet.agentArgs('ahead'));
    await waitFor(() => fleet?.broker.registry.find('ahead')?.state === 'online', { timeoutMs: 30_000, what: 'the newer agent online' });
    expect(lines).toContainEqual(
      expect.objectContaining({
        message: expect.stringMatching(new RegExp(`^agent version ${agentVersion.replace(/\./g, '\\.')} is newer than broker .*upgrade the broker first`)),
      }),
    );
  });
});

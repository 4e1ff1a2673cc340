import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Collector } from '../agent/collectors/collector.ts';
import type { CollectorContext } from '../agent/collectors/collector-plugin.ts';
import type { Dispatcher } from '../agent/dispatcher/dispatcher.ts';
import type { Host } from '../broker/agents/agent-registry.ts';
import type { Identity } from '../broker/auth/identities.ts';
import { inProcessBrokerOptions } from '../broker/broker-options.ts';
import { McpSession } from '../broker/mcp/mcp-session.ts';
import { SURFACES } from '../broker/mcp/surfaces/surfaces.ts';
import { McpTasks } from '../broker/mcp/tasks/mcp-tasks.ts';
import { WidgetResources } from '../broker/web/widget-resources.ts';
import { REGISTRIES } from '../scripts/plugin-registries.ts';
import { silentLogger } from '../shared/log/logger.ts';
import { beaconPlugin } from './fixtures/domain/agent/collectors/beacon/beacon-plugin.ts';
import { beaconDomain } from './fixtures/domain/shared/domains/beacon/beacon-domain.ts';
import { type LinkedAction, type LinkedFleet, startLinkedFleet } from './harness/linked-fleet.ts';
import { TEST_AGENT_DEFAULTS } from './harness/test-agent-defaults.ts';

// The registries `npm run gen` would write were the fixture's folders in the tree: each as committed, and the fixture's entry.
vi.mock('../shared/domains/domains.gen.ts', async (real: () => Promise<typeof import('../shared/domains/domains.gen.ts')>) => ({
  DOMAIN_FOLDERS: [...(await real()).DOMAIN_FOLDERS, (await import('./fixtures/domain/shared/domains/beacon/beacon-domain.ts')).beaconDomain],
}));
vi.mock('../shared/domains/domain-heads.gen.ts', async (real: () => Promise<typeof import('../shared/domains/domain-heads.gen.ts')>) => {
  const committed = await real();
  return {
    DOMAIN_HEAD_FOLDERS: [...committed.DOMAIN_HEAD_FOLDERS, (await import('./fixtures/domain/shared/domains/beacon/beacon-head.ts')).beaconHead],
    DOMAIN_LOADERS: {
      ...committed.DOMAIN_LOADERS,
      beacon: async () => (await import('./fixtures/domain/shared/domains/beacon/beacon-domain.ts')).beaconDomain,
    },
  };
});
vi.mock('../shared/domains/parts.gen.ts', async (real: () => Promise<typeof import('../shared/domains/parts.gen.ts')>) => ({
  PART_FOLDERS: [...(await real()).PART_FOLDERS, (await import('./fixtures/domain/shared/domains/beacon/beacon-parts.ts')).beaconParts],
}));
vi.mock('../agent/collectors/collector-plugins.gen.ts', async (real: () => Promise<typeof import('../agent/collectors/collector-plugins.gen.ts')>) => ({
  COLLECTOR_PLUGINS: [...(await real()).COLLECTOR_PLUGINS, (await import('./fixtures/domain/agent/collectors/beacon/beacon-plugin.ts')).beaconPlugin],
}));
vi.mock('../broker/domains/broker-domains.gen.ts', async (real: () => Promise<typeof import('../broker/domains/broker-domains.gen.ts')>) => ({
  BROKER_DOMAIN_FOLDERS: [...(await real()).BROKER_DOMAIN_FOLDERS, (await import('./fixtures/domain/broker/domains/beacon/beacon-broker.ts')).beaconBroker],
}));

const FIXTURE_ROOT = new URL('./fixtures/domain/', import.meta.url).pathname;

/** The beacon collector of a host, made by its plug-in as an agent makes it, and what it registers with the dispatcher. */
function beaconsOf(labels: Record<string, string>, report: (kind: string, payload: unknown) => void): { collector: Collector; actions: LinkedAction[] } {
  const context = {
    options: { ...TEST_AGENT_DEFAULTS, labels },
    flags: {},
    domainOptions: undefined,
    log: silentLogger,
    hooks: { report, onAvailabilityChange: () => {}, onFactsChange: () => {} },
  } as unknown as CollectorContext;
  const collector = beaconPlugin.create(context);
  const actions: LinkedAction[] = [];
  const dispatcher: Pick<Dispatcher, 'register'> = {
    // A collector registers its handlers by action id; the agent's dispatcher finds the declaration in the domain.
    register: (action, handler) => {
      const declared = typeof action === 'string' ? beaconDomain.actions.find((candidate) => candidate.id === action) : action;
      if (!declared) throw new Error(`the beacon domain declares no action ${String(action)}`);
      actions.push({ action: declared, handler: handler as LinkedAction['handler'] });
    },
  };
  collector.register(dispatcher as Dispatcher);
  return { collector, actions };
}

describe('a domain added from its three folders alone', () => {
  let fleet: LinkedFleet;
  let limited: Client;
  let admin: Client;
  const stops: (() => Promise<unknown>)[] = [];

  /** A real SDK client on an MCP session of this identity, linked in memory. */
  async function clientOf(identity: Identity): Promise<Client> {
    const tasks = new McpTasks(fleet.store, silentLogger, 60_000, 'json');
    const session = new McpSession({
      identity,
      surface: SURFACES.individual,
      textFormat: 'json',
      runner: fleet.runner,
      registry: fleet.registry,
      store: fleet.store,
      log: silentLogger,
      era: 'legacy',
      tasks,
      widgets: new WidgetResources(FIXTURE_ROOT),
      iconOrigin: undefined,
      stillRunningProgressMs: inProcessBrokerOptions(FIXTURE_ROOT).stillRunningProgressMs,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await session.server.connect(serverSide);
    const client = new Client({ name: 'beacon-test', version: '1' });
    await client.connect(clientSide);
    stops.push(
      () => client.close(),
      () => session.server.close(),
    );
    return client;
  }

  beforeAll(async () => {
    fleet = await startLinkedFleet();
    stops.push(() => fleet.stop());
    // The fleet index takes the agents' reports.
    fleet.runner.index.start();
    stops.push(async () => fleet.runner.index.stop());
    for (const [name, labels] of [
      ['b-1', { 'beacon.alpha': '900', 'beacon.beta': '0' }],
      ['b-2', { 'beacon.gamma': '300' }],
    ] as const) {
      const { collector, actions } = beaconsOf(labels, (kind, payload) =>
        fleet.registry.emit('report', fleet.registry.get(`agent-${name}`) as Host, kind, payload, Date.now()),
      );
      await fleet.addHost(name, actions);
      await collector.start?.();
    }
    limited = await clientOf(fleet.identity(0, ['beacon:b-1/alpha'], 'one-beacon'));
    admin = await clientOf(fleet.identity(0));
  });

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent: Record<string, unknown> };

  it('is found where npm run gen looks: a declaration in each of its folders, and nothing else', () => {
    const found = Object.fromEntries(REGISTRIES.map((registry) => [registry.path, registry.find(FIXTURE_ROOT).map((entry) => entry.exportName)]));
    expect(found).toEqual({
      'shared/domains/domains.gen.ts': ['beaconDomain'],
      'shared/domains/domain-heads.gen.ts': ['beaconHead'],
      'shared/domains/parts.gen.ts': ['beaconParts'],
      'agent/collectors/collector-plugins.gen.ts': ['beaconPlugin'],
      'broker/domains/broker-domains.gen.ts': ['beaconBroker'],
    });
  });

  it('finds and describes only the beacon a limited grant shows, as if the others did not exist', async () => {
    const everything = await call(admin, 'find', { type: 'beacon' });
    expect((everything.structuredContent.rows as { name: string }[]).map((row) => row.name).sort()).toEqual(['alpha', 'beta', 'gamma']);
    const found = await call(limited, 'find', { type: 'beacons' });
    expect(found.structuredContent).toMatchObject({ total: 1, rows: [{ type: 'beacon', name: 'alpha', host: 'b-1', state: 'lit' }] });
    const described = await call(limited, 'describe', { type: 'beacon', id: 'alpha' });
    expect(described.structuredContent).toMatchObject({ type: 'beacon', name: 'alpha', details: { lumens: 900 }, host: 'b-1' });
    const hidden = await call(limited, 'describe', { type: 'beacon', id: 'beta' });
    const missing = await call(limited, 'describe', { type: 'beacon', id: 'delta' });
    expect(hidden.isError).toBe(true);
    expect((hidden.structuredContent.error as { code: string }).code).toBe('not_found');
    expect(hidden.structuredContent.error).toEqual({ ...(missing.structuredContent.error as object), message: expect.stringContaining('"beta"') });
  });

  it('reads the beacon resource the grant shows, and answers a hidden one like one that does not exist', async () => {
    const { contents } = await limited.readResource({ uri: 'fleet://hosts/b-1/beacons/alpha' });
    expect(JSON.parse((contents[0] as { text: string }).text)).toMatchObject({ type: 'beacon', name: 'alpha', details: { lumens: 900 } });
    const listed = (await limited.listResources()).resources.map((resource) => resource.uri);
    expect(listed).toContain('fleet://hosts/b-1/beacons/alpha');
    expect(listed.filter((uri) => uri.includes('/beacons/'))).toEqual(['fleet://hosts/b-1/beacons/alpha']);
    await expect(limited.readResource({ uri: 'fleet://hosts/b-1/beacons/beta' })).rejects.toThrow(/Resource not found/);
  });

  it("calls the domain's action on the host where the grant shows the beacon, and nowhere else", async () => {
    const shone = await call(limited, 'beacon_shine', { host: 'b-1', name: 'alpha' });
    expect(shone.isError).toBeFalsy();
    expect(shone.structuredContent).toMatchObject({ host: 'b-1', availability: 'available', name: 'alpha', lumens: 900 });
    const refused = await call(limited, 'beacon_shine', { host: 'b-1', name: 'beta' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ errors: [expect.objectContaining({ code: 'not_found' })] });
    expect((await call(admin, 'beacon_shine', { host: 'b-1', name: 'beta' })).structuredContent).toMatchObject({ lumens: 0 });
  });

  it("offers the domain's prompt to an identity that may see a beacon, completing and checking what it names", async () => {
    expect((await limited.listPrompts()).prompts.map((prompt) => prompt.name)).toContain('check_beacon');
    const completed = await limited.complete({ ref: { type: 'ref/prompt', name: 'check_beacon' }, argument: { name: 'beacon', value: '' } });
    expect(completed.completion.values).toEqual(['alpha']);
    const prompt = await limited.getPrompt({ name: 'check_beacon', arguments: { beacon: 'alpha' } });
    expect(prompt.messages[0]?.content).toMatchObject({ type: 'text', text: expect.stringContaining('beacon: "alpha"') });
    await expect(limited.getPrompt({ name: 'check_beacon', arguments: { beacon: 'beta' } })).rejects.toThrow(/no beacon "beta"/);
  });
});

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { COLLECTOR_PLUGINS } from '../agent/collectors/collector-plugins.gen.ts';
import { BROKER_ACTIONS, BROKER_DOMAINS, BROKER_SERVICES, WIDGETS } from '../broker/domains/broker-domains.ts';
import { CATALOG } from '../shared/catalog/catalog.ts';
import type { Domain, DomainHead } from '../shared/domains/domain.ts';
import { DOMAIN_HEADS, loadDomain } from '../shared/domains/domain-heads.ts';
import { DOMAINS } from '../shared/domains/domains.ts';
import { RESOURCE_TYPES } from '../shared/domains/resource-types.ts';
import { REGISTRIES, renderRegistries } from './plugin-registries.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

function foldersOf(dir: string): string[] {
  return readdirSync(join(root, dir))
    .filter((entry) => statSync(join(root, dir, entry)).isDirectory())
    .sort();
}

describe('domain registries', () => {
  const temps: string[] = [];
  afterEach(() => {
    for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('are what npm run gen writes from the folders as they are now', () => {
    for (const [path, text] of renderRegistries(root)) {
      expect(readFileSync(join(root, path), 'utf8'), `${path} is stale: run npm run gen`).toBe(text);
    }
  });

  it('hold every domain folder once, named after its folder, and nothing else', () => {
    expect(DOMAINS.map((domain) => domain.name).sort()).toEqual(foldersOf('shared/domains'));
    expect(new Set(DOMAINS.map((domain) => domain.rank)).size).toBe(DOMAINS.length);
  });

  it('hold every collector folder once, each the collector of the declared domain of its name', () => {
    expect(COLLECTOR_PLUGINS.map((plugin) => plugin.domain.name).sort()).toEqual(foldersOf('agent/collectors'));
    for (const plugin of COLLECTOR_PLUGINS) expect(DOMAIN_HEADS).toContain(plugin.domain);
  });

  it('hold every domain head once, and load each domain whole by its name: its own head with its actions and reports', async () => {
    expect(DOMAIN_HEADS.map((head) => head.name)).toEqual(DOMAINS.map((domain) => domain.name));
    for (const head of DOMAIN_HEADS) {
      const domain = await loadDomain(head.name);
      expect(DOMAINS).toContain(domain);
      for (const [key, value] of Object.entries(head)) expect(domain?.[key as keyof DomainHead], `${head.name}.${key}`).toBe(value);
      for (const action of domain?.actions ?? []) expect(action.id.startsWith(`${head.name}.`), action.id).toBe(true);
    }
    expect(await loadDomain('no-such-domain')).toBeUndefined();
  });

  it('hold every broker half once, each of the declared domain of its folder, with an indexer for every domain that declares reports', () => {
    expect(BROKER_DOMAINS.map((broker) => broker.domain.name).sort()).toEqual(foldersOf('broker/domains'));
    for (const broker of BROKER_DOMAINS) expect(DOMAINS).toContain(broker.domain);
    for (const domain of DOMAINS.filter((d: Domain) => Object.keys(d.reports).length > 0)) {
      expect(BROKER_DOMAINS.find((broker) => broker.domain === domain)?.indexer, `${domain.name} declares reports`).toBeDefined();
    }
  });

  it('route every action to the hosts, to the broker, or to the domain whose broker half declares its route', () => {
    const routed = new Set(BROKER_DOMAINS.filter((broker) => broker.route).map((broker) => broker.domain.name));
    for (const action of CATALOG) expect(['host', 'broker'].includes(action.runsOn) || routed.has(action.runsOn), action.id).toBe(true);
  });

  it('show each widget an action names, and name only declared types in resources and prompts', () => {
    const widgets = new Set(WIDGETS.map((widget) => widget.name));
    expect(widgets.size).toBe(WIDGETS.length);
    for (const action of CATALOG) if (action.widget) expect(widgets.has(action.widget), action.id).toBe(true);
    const types = new Set<string>(RESOURCE_TYPES);
    for (const broker of BROKER_DOMAINS) {
      for (const resource of broker.resources ?? []) if (resource.type) expect(types.has(resource.type), resource.template).toBe(true);
      for (const prompt of broker.prompts ?? []) {
        for (const type of [...prompt.reads, ...prompt.arguments.map((argument) => argument.names)]) expect(types.has(type), prompt.name).toBe(true);
      }
    }
  });

  it('answer each broker action of the catalog once', () => {
    const answered = BROKER_ACTIONS.map((handler) => handler.action.id).sort();
    expect(new Set(answered).size).toBe(answered.length);
    expect(answered).toEqual(
      CATALOG.filter((action) => action.runsOn === 'broker')
        .map((action) => action.id)
        .sort(),
    );
  });

  it('run one broker service for each domain that declares broker flags, and none for the others', () => {
    const served = BROKER_SERVICES.map((service) => service.domain.name).sort();
    expect(new Set(BROKER_SERVICES.map((service) => service.name)).size).toBe(BROKER_SERVICES.length);
    for (const service of BROKER_SERVICES) expect(DOMAINS).toContain(service.domain);
    expect(served).toEqual(
      DOMAINS.filter((domain: Domain) => domain.brokerFlags)
        .map((domain) => domain.name)
        .sort(),
    );
  });

  it('refuse a domain folder that does not declare its domain, naming the file it lacks', () => {
    const temp = mkdtempSync(join(tmpdir(), 'registries-'));
    temps.push(temp);
    mkdirSync(join(temp, 'shared/domains/lights'), { recursive: true });
    const domains = REGISTRIES.find((registry) => registry.path === 'shared/domains/domains.gen.ts');
    expect(() => domains?.find(temp)).toThrow('shared/domains/lights has no lights/lights-domain.ts');
    writeFileSync(join(temp, 'shared/domains/lights/lights-domain.ts'), 'export const lights = {};\n');
    expect(() => domains?.find(temp)).toThrow('does not export lightsDomain');
  });
});

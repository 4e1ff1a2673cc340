import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { AGENT_COMMAND } from '../agent/agent-options.ts';
import { BOOTSTRAP_FILES } from '../broker/bootstrap/bootstrap-files.ts';
import { BROKER_COMMAND } from '../broker/broker-options.ts';
import { packageChart } from '../scripts/release/chart-archive.ts';
import { runCommand } from '../scripts/release/run-command.ts';
import { resolveCommandsOptions } from '../shared/domains/commands/commands-options.ts';
import { DEFAULT_SYSTEM_BUS_SOCKET } from '../shared/domains/systemd/systemd-flags.ts';
import type { CommandSpec } from '../shared/options/command-line.ts';
import { runFleetmesh } from './harness/cli-process.ts';
import { flagVariables } from './harness/flag-variables.ts';
import { REPO_ROOT, run } from './harness/fleetmesh-image.ts';
import { type ChartContext, renderTemplate, valuePaths } from './harness/go-template.ts';
import { makeTempDir } from './harness/temp-dir.ts';

const CHART = join(REPO_ROOT, 'charts/fleetmesh');
const TEMPLATES = join(CHART, 'templates');
/**
 * A Go toolchain (Debian's golang-go, which scripts/test-packages.sh installs)
 * builds test/harness/helm-render, the chart rendered by Go's text/template.
 */
const GO = [...(process.env.PATH ?? '').split(delimiter), '/usr/lib/go/bin'].map((dir) => join(dir, 'go')).find((path) => existsSync(path));

/** Kubernetes' own schemas, one file per kind, for a version the chart supports (test/k8s-schemas/SOURCE.md). */
const K8S_SCHEMAS = join(REPO_ROOT, 'test/k8s-schemas/v1.33.3-standalone-strict');

/**
 * Draft-07 for values.schema.json, as Helm reads it; Kubernetes' schemas use
 * OpenAPI's number and byte formats, which say nothing JSON Schema checks,
 * and x-kubernetes-* annotations, which are not keywords.
 */
const ajv = new Ajv({ strict: false, allErrors: true, logger: false, formats: { int32: true, int64: true, byte: true, 'date-time': true } });

/** Each error as `path: message`, the way helm install reports values that fail the chart's schema. */
function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((error) => {
    const path = error.instancePath.slice(1).replaceAll('/', '.') || '(root)';
    const extra = error.keyword === 'additionalProperties' ? ` (${(error.params as { additionalProperty: string }).additionalProperty})` : '';
    return `${path}: ${error.message}${extra}`;
  });
}

const kindSchemas = new Map<string, ValidateFunction>();

/** The validator of a kind at an apiVersion, from its vendored file (named as the schema repositories name them: deployment-apps-v1.json). */
function kindSchema(apiVersion: string, kind: string): ValidateFunction {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const file = `${kind.toLowerCase()}${group ? `-${group.split('.')[0]}` : ''}-${version}.json`;
  let validate = kindSchemas.get(file);
  if (!validate) {
    const { $schema: _draft, ...schema } = JSON.parse(readFileSync(join(K8S_SCHEMAS, file), 'utf8'));
    validate = ajv.compile(schema);
    kindSchemas.set(file, validate);
  }
  return validate;
}

/** The problems Kubernetes' schema finds in one rendered object (none: valid). */
function kubernetesProblems(manifest: Manifest): string[] {
  const { file: _template, ...object } = manifest;
  const validate = kindSchema(object.apiVersion, object.kind);
  return validate(object) ? [] : describeErrors(validate.errors);
}

/**
 * apiVersion → kinds served by Kubernetes 1.29 and later, for what a chart
 * like this one could name (none of these is deprecated or removed since).
 */
const KUBERNETES_KINDS: Record<string, string[]> = {
  v1: ['ConfigMap', 'PersistentVolumeClaim', 'Secret', 'Service', 'ServiceAccount'],
  'apps/v1': ['DaemonSet', 'Deployment', 'StatefulSet'],
  'policy/v1': ['PodDisruptionBudget'],
  'networking.k8s.io/v1': ['Ingress', 'NetworkPolicy'],
  'rbac.authorization.k8s.io/v1': ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'],
};

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are read as whatever shape they have
type Manifest = any;

// biome-ignore lint/suspicious/noExplicitAny: values are merged as plain data
function merge(base: any, overrides: any): any {
  if (overrides === null || typeof overrides !== 'object' || Array.isArray(overrides)) return overrides;
  const result = { ...base };
  for (const [key, value] of Object.entries(overrides)) result[key] = merge(base?.[key], value);
  return result;
}

function has(values: unknown, path: string): boolean {
  let node = values;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

describe('the Helm chart (structure; no Helm binary here)', () => {
  const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'));
  const defaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
  const templates = readdirSync(TEMPLATES).map((file) => ({ file, source: readFileSync(join(TEMPLATES, file), 'utf8') }));
  const valuesSchema = ajv.compile(JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')));
  const temp = makeTempDir('fm-chart-');
  let inline: Record<string, string>;

  /**
   * Renders every template with the chart's values overridden by `overrides`,
   * after checking the merged values against values.schema.json as Helm does
   * before it renders anything.
   */
  function render(overrides: object = {}): { manifests: Manifest[]; notes: string } {
    const context = chartContext(overrides);
    return documents(Object.fromEntries(templates.map(({ file, source }) => [file, renderTemplate(source, context)])));
  }

  /** What the templates see, as Helm builds it, once the merged values pass values.schema.json. */
  function chartContext(overrides: object): ChartContext {
    const values: Record<string, unknown> = merge(defaults, overrides);
    if (!valuesSchema(values)) throw new Error(`values don't meet the specifications of the schema: ${describeErrors(valuesSchema.errors).join('; ')}`);
    return {
      Values: values,
      Release: { Name: 'fm', Namespace: 'ops', Service: 'Helm' },
      Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
    };
  }

  /** Each rendered template's YAML documents as objects (tagged with their file), and the notes. */
  function documents(rendered: Record<string, string>): { manifests: Manifest[]; notes: string } {
    const manifests: Manifest[] = [];
    let notes = '';
    for (const [file, text] of Object.entries(rendered).sort(([a], [b]) => a.localeCompare(b))) {
      if (file === 'NOTES.txt') {
        notes = text;
        continue;
      }
      for (const document of parseAllDocuments(text)) {
        if (document.errors.length) throw new Error(`${file}: ${document.errors[0]?.message}`);
        const manifest = document.toJS();
        if (manifest !== null) manifests.push({ ...manifest, file });
      }
    }
    return { manifests, notes };
  }

  /** Renders with Go's text/template (test/harness/helm-render), the engine Helm runs, when a Go toolchain is here. */
  async function renderWithGo(overrides: object): Promise<{ manifests: Manifest[]; notes: string }> {
    const input = Buffer.from(JSON.stringify(chartContext(overrides)));
    return documents(JSON.parse(await run(goRenderer, [CHART], { input })));
  }

  const find = (manifests: Manifest[], kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name);

  let goRenderer = '';

  beforeAll(async () => {
    if (GO) {
      goRenderer = join(temp.path, 'helm-render');
      await run(GO, ['build', '-o', goRenderer, 'main.go'], { cwd: join(REPO_ROOT, 'test/harness/helm-render') });
    }
    const dir = join(temp.path, 'secrets');
    expect((await runFleetmesh(['bootstrap', '--out', dir])).code).toBe(0);
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    inline = {
      caCert: read(BOOTSTRAP_FILES.caCert),
      caKey: read(BOOTSTRAP_FILES.caKey),
      joinToken: read(BOOTSTRAP_FILES.joinToken).trim(),
      caPin: read(BOOTSTRAP_FILES.caPin).trim(),
      adminToken: read(BOOTSTRAP_FILES.adminToken).trim(),
    };
  });
  afterAll(() => temp.remove());

  it('has a Chart.yaml and values.yaml that parse, at the package version', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'fleetmesh', type: 'application', appVersion: pkg.version });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(defaults).toMatchObject({ image: { repository: expect.any(String) }, broker: expect.any(Object), agent: expect.any(Object) });
  });

  it('reads only values that values.yaml declares', () => {
    const missing = templates.flatMap(({ file, source }) => valuePaths(source).flatMap((path) => (has(defaults, path) ? [] : [`${file}: .Values.${path}`])));
    expect(missing).toEqual([]);
  });

  it('refuses to render without bootstrap material, naming what to set', () => {
    expect(() => render()).toThrow(/bootstrap\.existingSecret/);
  });

  it('renders only kinds Kubernetes 1.29+ serves: a broker Deployment, Service, PVC and Secret, and an agent DaemonSet', () => {
    const { manifests } = render({ bootstrap: inline });
    for (const manifest of manifests) {
      expect(KUBERNETES_KINDS[manifest.apiVersion], `${manifest.file}: apiVersion ${manifest.apiVersion}`).toBeDefined();
      expect(KUBERNETES_KINDS[manifest.apiVersion], `${manifest.file}: ${manifest.kind}`).toContain(manifest.kind);
      expect(manifest.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    }
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      'DaemonSet/fm-agent',
      'Deployment/fm-broker',
      'PersistentVolumeClaim/fm-broker',
      'Secret/fm-bootstrap',
      'Service/fm-broker',
    ]);
    const secret = find(manifests, 'Secret', 'fm-bootstrap');
    expect(Buffer.from(secret.data['join-token'], 'base64').toString()).toBe(inline.joinToken);
    expect(Object.keys(secret.data).sort()).toEqual(Object.values(BOOTSTRAP_FILES).sort());
  });

  it('wires the broker: selectors, ports, probes, the PVC, bootstrap files and only flags the broker reads', () => {
    const { manifests } = render({ bootstrap: inline });
    const deployment = find(manifests, 'Deployment', 'fm-broker');
    const service = find(manifests, 'Service', 'fm-broker');
    const pod = deployment.spec.template;
    expect(pod.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
    expect(pod.metadata.labels).toMatchObject(service.spec.selector);
    const [container] = pod.spec.containers;
    expect(container.args).toEqual(['broker']);
    const portNames = container.ports.map((p: Manifest) => p.name);
    for (const port of service.spec.ports) expect(portNames).toContain(port.targetPort);
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) expect(portNames).toContain(container[probe].httpGet.port);
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    const volumes = Object.fromEntries(pod.spec.volumes.map((v: Manifest) => [v.name, v]));
    expect(volumes.data.persistentVolumeClaim.claimName).toBe(find(manifests, 'PersistentVolumeClaim', 'fm-broker').metadata.name);
    expect(volumes.bootstrap.secret.secretName).toBe('fm-bootstrap');
    const env = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value]));
    const brokerVariables = flagVariables(BROKER_COMMAND as unknown as CommandSpec);
    expect(Object.keys(env).filter((name) => !brokerVariables.has(name))).toEqual([]);
    expect(env.FLEETMESH_MCP_LISTEN).toBe('0.0.0.0:7400');
    expect(env.FLEETMESH_ADVERTISE_NAMES.split(',')).toContain('fm-broker.ops.svc');
    expect(env.FLEETMESH_MCP_ALLOWED_HOSTS.split(',')).toEqual(expect.arrayContaining(['fm-broker.ops.svc:7400', 'localhost:7400']));
    // The probes send a Host the broker accepts (it checks the Host of every route).
    const allowed = env.FLEETMESH_MCP_ALLOWED_HOSTS.split(',');
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      const host = container[probe].httpGet.httpHeaders.find((h: Manifest) => h.name === 'Host')?.value;
      expect(allowed).toContain(host);
    }
    // Every file the broker reads is an item of a mounted secret.
    const mounts = Object.fromEntries(container.volumeMounts.map((m: Manifest) => [m.name, m.mountPath]));
    const files = new Set(volumes.bootstrap.secret.items.map((item: Manifest) => `${mounts.bootstrap}/${item.path}`));
    for (const [name, value] of Object.entries(env)) if (name.endsWith('_FILE')) expect(files.has(value), `${name}=${value}`).toBe(true);
  });

  it('runs the agent on every node with host /proc and /sys, probes, limits, and only the join token and pin', () => {
    const { manifests } = render({ bootstrap: inline, agent: { labels: 'env=prod' } });
    const daemonset = find(manifests, 'DaemonSet', 'fm-agent');
    const pod = daemonset.spec.template;
    expect(pod.metadata.labels).toMatchObject(daemonset.spec.selector.matchLabels);
    expect(pod.spec.tolerations).toEqual([{ operator: 'Exists' }]);
    const [container] = pod.spec.containers;
    expect(container.args).toEqual(['agent']);
    expect(container.resources).toMatchObject({ requests: { cpu: expect.any(String), memory: expect.any(String) }, limits: { memory: expect.any(String) } });
    expect(container.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 'health' });
    expect(container.ports.map((p: Manifest) => p.name)).toContain('health');
    const env = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value ?? e.valueFrom]));
    const agentVariables = flagVariables(AGENT_COMMAND as unknown as CommandSpec);
    expect(Object.keys(env).filter((name) => !agentVariables.has(name))).toEqual([]);
    expect(env).toMatchObject({
      FLEETMESH_BROKER: 'fm-broker.ops.svc:7443',
      FLEETMESH_NAME: { fieldRef: { fieldPath: 'spec.nodeName' } },
      FLEETMESH_LABELS: 'env=prod',
      FLEETMESH_HEALTH_LISTEN: '0.0.0.0:7401',
    });
    const volumes = Object.fromEntries(pod.spec.volumes.map((v: Manifest) => [v.name, v]));
    const mounts = Object.fromEntries(container.volumeMounts.map((m: Manifest) => [m.name, m]));
    expect(volumes['host-proc'].hostPath.path).toBe('/proc');
    expect(volumes['host-sys'].hostPath.path).toBe('/sys');
    expect(mounts['host-proc'].readOnly).toBe(true);
    expect(mounts['host-sys'].readOnly).toBe(true);
    // Processes and listening ports are the node's, their holders read with two capabilities only.
    expect(env.FLEETMESH_HOST_PROC).toBe(mounts['host-proc'].mountPath);
    expect(container.securityContext).toMatchObject({
      runAsUser: 0,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'], add: ['SYS_PTRACE', 'DAC_OVERRIDE'] },
    });
    expect(volumes.bootstrap.secret.items.map((item: Manifest) => item.key).sort()).toEqual(['ca-pin', 'join-token']);
    expect(volumes['docker-socket']).toBeUndefined();
    expect(pod.spec.initContainers[0].volumeMounts[0].name).toBe('data');
  });

  it('follows the values: an existing Secret, no persistence, the Docker socket, node selection', () => {
    const { manifests, notes } = render({
      bootstrap: { existingSecret: 'fleetmesh-bootstrap' },
      broker: { persistence: { enabled: false }, nodeSelector: { 'kubernetes.io/os': 'linux' } },
      agent: { dockerSocket: { enabled: true, groupId: 998 }, nodeSelector: { role: 'worker' }, brokerAddress: 'broker.example.com:7443' },
      image: { tag: '9.9.9' },
    });
    expect(manifests.map((m) => m.kind).sort()).toEqual(['DaemonSet', 'Deployment', 'Service']);
    const broker = find(manifests, 'Deployment', 'fm-broker').spec.template.spec;
    expect(broker.volumes.find((v: Manifest) => v.name === 'data')).toEqual({ name: 'data', emptyDir: {} });
    expect(broker.volumes.find((v: Manifest) => v.name === 'bootstrap').secret.secretName).toBe('fleetmesh-bootstrap');
    expect(broker.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(broker.containers[0].image).toBe('fleetmesh:9.9.9');
    const agent = find(manifests, 'DaemonSet', 'fm-agent').spec.template.spec;
    expect(agent.nodeSelector).toEqual({ role: 'worker' });
    expect(agent.securityContext.supplementalGroups).toEqual([998]);
    expect(agent.volumes.find((v: Manifest) => v.name === 'docker-socket').hostPath).toEqual({ path: '/var/run/docker.sock', type: 'Socket' });
    expect(agent.containers[0].env.find((e: Manifest) => e.name === 'FLEETMESH_BROKER').value).toBe('broker.example.com:7443');
    expect(notes).toMatch(/port-forward svc\/fm-broker 7400:7400/);
    expect(notes).toMatch(/get secret fleetmesh-bootstrap -o jsonpath='\{\.data\.admin-token\}'/);
    expect(notes).toMatch(/http:\/\/fm-broker\.ops\.svc:7400\/mcp/);
    expect(notes).toMatch(/kubectl -n ops rollout status deployment\/fm-broker\n {2}kubectl -n ops rollout status daemonset\/fm-agent\n/);
    expect(render({ bootstrap: inline, agent: { enabled: false } }).notes).not.toMatch(/daemonset/);
  });

  it("gives the agents the files and named commands the values allow, the node's directory read-only", () => {
    const commands = [
      { name: 'disk_usage', argv: ['df', '-h', '{mount}'], params: { mount: { type: 'enum', values: ['/', '/var'] } } },
      { name: 'whoami', argv: ['id', '-un'], run_as: 'nobody', level: 2 },
    ];
    const { manifests } = render({ bootstrap: inline, agent: { files: { paths: '/host/etc/nginx/**,/host/etc/app/*.conf', hostDir: '/etc' }, commands } });
    const pod = find(manifests, 'DaemonSet', 'fm-agent').spec.template.spec;
    const [container] = pod.containers;
    const env = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value]));
    expect(env.FLEETMESH_FILE_PATHS).toBe('/host/etc/nginx/**,/host/etc/app/*.conf');
    const mounts = Object.fromEntries(container.volumeMounts.map((m: Manifest) => [m.name, m]));
    const volumes = Object.fromEntries(pod.volumes.map((v: Manifest) => [v.name, v]));
    expect(mounts['host-files']).toEqual({ name: 'host-files', mountPath: '/host/etc', readOnly: true });
    expect(volumes['host-files'].hostPath).toEqual({ path: '/etc', type: 'Directory' });
    // The commands file is a ConfigMap's item, mounted where FLEETMESH_COMMANDS says, which the agent reads as it would on a host.
    const configMap = find(manifests, 'ConfigMap', 'fm-agent-commands');
    expect(volumes.commands.configMap).toEqual({ name: 'fm-agent-commands', defaultMode: 0o444 });
    expect(env.FLEETMESH_COMMANDS).toBe(`${mounts.commands.mountPath}/commands.yaml`);
    const file = join(temp.path, 'commands.yaml');
    writeFileSync(file, configMap.data['commands.yaml'], { mode: 0o444 });
    expect(resolveCommandsOptions(file).commands.map((command) => [command.name, command.program, command.level, command.runAs?.name])).toEqual([
      ['disk_usage', '/usr/bin/df', 1, undefined],
      ['whoami', '/usr/bin/id', 2, 'nobody'],
    ]);
    // None of it by default.
    const plain = find(render({ bootstrap: inline }).manifests, 'DaemonSet', 'fm-agent').spec.template.spec;
    expect(plain.containers[0].env.map((e: Manifest) => e.name)).not.toContain('FLEETMESH_COMMANDS');
    expect(plain.volumes.map((v: Manifest) => v.name)).not.toContain('host-files');
  });

  it('gives the agents what the host tools read of the node when the values turn it on, each read-only at the path its flag names', () => {
    const { manifests } = render({
      bootstrap: inline,
      agent: {
        journal: { enabled: true, directory: '/run/log/journal' },
        systemBus: { enabled: true },
        hostRoot: { enabled: true },
        logs: { paths: '/host/var/log/*.log,/host/var/log/nginx/*.log' },
        dockerConfig: { hostDir: '/root/.docker' },
      },
    });
    const pod = find(manifests, 'DaemonSet', 'fm-agent').spec.template.spec;
    const [container] = pod.containers;
    const env = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value]));
    const mounts = Object.fromEntries(container.volumeMounts.map((m: Manifest) => [m.name, m]));
    const volumes = Object.fromEntries(pod.volumes.map((v: Manifest) => [v.name, v]));
    // Each flag names the path its volume is mounted at, and the volume is the node's path.
    expect(volumes['host-journal'].hostPath).toEqual({ path: '/run/log/journal', type: 'Directory' });
    expect(env.FLEETMESH_JOURNAL_DIR).toBe(mounts['host-journal'].mountPath);
    expect(volumes['system-bus'].hostPath).toEqual({ path: '/run/dbus/system_bus_socket', type: 'Socket' });
    expect(env.FLEETMESH_SYSTEM_BUS).toBe(mounts['system-bus'].mountPath);
    expect(volumes['host-root'].hostPath).toEqual({ path: '/', type: 'Directory' });
    expect(env.FLEETMESH_HOST_ROOT).toBe(mounts['host-root'].mountPath);
    expect(volumes['docker-config'].hostPath).toEqual({ path: '/root/.docker', type: 'Directory' });
    expect(env.DOCKER_CONFIG).toBe(mounts['docker-config'].mountPath);
    for (const name of ['host-journal', 'system-bus', 'host-root', 'docker-config']) expect(mounts[name].readOnly, name).toBe(true);
    // The log globs name paths under the node's root as the agent sees it.
    expect(env.FLEETMESH_LOG_PATHS).toBe('/host/var/log/*.log,/host/var/log/nginx/*.log');
    for (const glob of env.FLEETMESH_LOG_PATHS.split(',')) expect(glob.startsWith(`${mounts['host-root'].mountPath}/`)).toBe(true);
    // Every variable is one the agent reads, and the socket's default path is the flag's own default.
    const agentVariables = flagVariables(AGENT_COMMAND as unknown as CommandSpec);
    expect(Object.keys(env).filter((name) => !agentVariables.has(name))).toEqual([]);
    expect(env.FLEETMESH_SYSTEM_BUS).toBe(DEFAULT_SYSTEM_BUS_SOCKET);
    // None of it by default.
    const plain = find(render({ bootstrap: inline }).manifests, 'DaemonSet', 'fm-agent').spec.template.spec;
    for (const name of ['host-journal', 'system-bus', 'host-root', 'docker-config']) expect(plain.volumes.map((v: Manifest) => v.name)).not.toContain(name);
    for (const name of ['FLEETMESH_JOURNAL_DIR', 'FLEETMESH_SYSTEM_BUS', 'FLEETMESH_HOST_ROOT', 'FLEETMESH_LOG_PATHS', 'DOCKER_CONFIG'])
      expect(plain.containers[0].env.map((e: Manifest) => e.name)).not.toContain(name);
    expect(() => render({ bootstrap: inline, agent: { journal: { enabled: true, directory: 'var/log/journal' } } })).toThrow(/journal/);
  });

  it('runs a broker cluster: several replicas rolled one at a time, the store and bus URLs from a Secret, no PVC', () => {
    expect(() => render({ bootstrap: inline, cluster: { enabled: true } })).toThrow(/cluster\.existingSecret/);
    const { manifests } = render({ bootstrap: inline, cluster: { enabled: true, replicas: 4, existingSecret: 'fm-cluster' } });
    expect(manifests.map((m) => m.kind)).not.toContain('PersistentVolumeClaim');
    const deployment = find(manifests, 'Deployment', 'fm-broker');
    expect(deployment.spec.replicas).toBe(4);
    expect(deployment.spec.strategy.type).toBe('RollingUpdate');
    const pod = deployment.spec.template.spec;
    expect(pod.volumes.find((v: Manifest) => v.name === 'data')).toEqual({ name: 'data', emptyDir: {} });
    const env = Object.fromEntries(pod.containers[0].env.map((e: Manifest) => [e.name, e.valueFrom?.secretKeyRef]));
    expect(env.FLEETMESH_BUS).toEqual({ name: 'fm-cluster', key: 'bus-url' });
    expect(env.FLEETMESH_STORE).toEqual({ name: 'fm-cluster', key: 'store-url' });
    expect(pod.volumes.map((v: Manifest) => v.name)).not.toContain('bus');
  });

  it("mounts the CA of the bus's TLS certificate and an nkey seed from the cluster Secret when named", () => {
    const { manifests } = render({ bootstrap: inline, cluster: { enabled: true, existingSecret: 'fm-cluster', busCaKey: 'bus-ca.crt', busNkeyKey: 'nkey' } });
    const pod = find(manifests, 'Deployment', 'fm-broker').spec.template.spec;
    const env = Object.fromEntries(pod.containers[0].env.map((e: Manifest) => [e.name, e.value]));
    expect(env).toMatchObject({ FLEETMESH_BUS_CA_FILE: '/etc/fleetmesh/bus/bus-ca.crt', FLEETMESH_BUS_NKEY_FILE: '/etc/fleetmesh/bus/bus-nkey' });
    expect(pod.volumes.find((v: Manifest) => v.name === 'bus').secret).toMatchObject({
      secretName: 'fm-cluster',
      items: [
        { key: 'bus-ca.crt', path: 'bus-ca.crt' },
        { key: 'nkey', path: 'bus-nkey' },
      ],
    });
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'bus', mountPath: '/etc/fleetmesh/bus', readOnly: true });
  });

  /** Every way of installing the chart the tests know, as values. */
  const installs = (): Record<string, object> => ({
    'inline bootstrap material': { bootstrap: inline },
    'an existing Secret, no persistence, the Docker socket, node selection, an outside broker address': {
      bootstrap: { existingSecret: 'fleetmesh-bootstrap' },
      broker: { persistence: { enabled: false }, nodeSelector: { 'kubernetes.io/os': 'linux' } },
      agent: {
        dockerSocket: { enabled: true, groupId: 998 },
        nodeSelector: { role: 'worker' },
        brokerAddress: 'broker.example.com:7443',
        labels: 'env=prod,tier=edge',
      },
      image: { tag: '9.9.9', pullPolicy: 'Always' },
    },
    'agents reading the node instead of SSH: its journal, system bus, root, log files and registry logins': {
      bootstrap: inline,
      agent: {
        journal: { enabled: true },
        systemBus: { enabled: true },
        hostRoot: { enabled: true },
        logs: { paths: '/host/var/log/*.log' },
        dockerConfig: { hostDir: '/root/.docker' },
        files: { paths: '/host/etc/nginx/**' },
      },
    },
    'a broker cluster with the bus CA and an nkey': {
      bootstrap: inline,
      cluster: { enabled: true, replicas: 4, existingSecret: 'fm-cluster', busCaKey: 'bus-ca.crt', busNkeyKey: 'nkey' },
    },
    'a broker alone behind a load balancer, on tolerant nodes, with a storage class': {
      bootstrap: inline,
      agent: { enabled: false },
      broker: {
        service: { type: 'LoadBalancer', mcpPort: 8400, grpcPort: 8443 },
        persistence: { enabled: true, size: '5Gi', storageClass: 'fast' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'ops', effect: 'NoSchedule' }],
        mcpPublicUrl: 'https://fleet.example.com/mcp',
        extraAdvertiseNames: 'fleet.example.com',
        extraMcpAllowedHosts: 'fleet.example.com:443',
        operationsLevel: 3,
        toolSurface: 'dynamic',
      },
    },
  });

  it("renders only objects that Kubernetes' own schemas accept, every field known (strict), for every way of installing it", () => {
    const problems: string[] = [];
    const kinds = new Set<string>();
    for (const [name, overrides] of Object.entries(installs())) {
      for (const manifest of render(overrides).manifests) {
        kinds.add(`${manifest.apiVersion} ${manifest.kind}`);
        for (const problem of kubernetesProblems(manifest)) problems.push(`${name}: ${manifest.file} ${manifest.kind}/${manifest.metadata.name}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
    expect([...kinds].sort()).toEqual(['apps/v1 DaemonSet', 'apps/v1 Deployment', 'v1 PersistentVolumeClaim', 'v1 Secret', 'v1 Service']);
  });

  it('validates against the vendored schemas named in their SOURCE.md, which refuse a misspelt field and a wrong type', () => {
    const source = readFileSync(join(K8S_SCHEMAS, '..', 'SOURCE.md'), 'utf8');
    const listed = Object.fromEntries([...source.matchAll(/^\| ([a-z0-9-]+\.json) +\| ([0-9a-f]{64}) \|$/gm)].map((m) => [m[1], m[2]]));
    const files = readdirSync(K8S_SCHEMAS).sort();
    expect(Object.keys(listed).sort()).toEqual(files);
    for (const file of files)
      expect(
        createHash('sha256')
          .update(readFileSync(join(K8S_SCHEMAS, file)))
          .digest('hex'),
        file,
      ).toBe(listed[file]);

    const deployment = find(render({ bootstrap: inline }).manifests, 'Deployment', 'fm-broker');
    expect(kubernetesProblems(deployment)).toEqual([]);
    const misspelt = structuredClone(deployment);
    misspelt.spec.template.spec.containers[0].imagePullPolicyy = 'Always';
    expect(kubernetesProblems(misspelt)).toContain('spec.template.spec.containers.0: must NOT have additional properties (imagePullPolicyy)');
    const wrongType = structuredClone(deployment);
    wrongType.spec.replicas = '1';
    expect(kubernetesProblems(wrongType).some((problem) => problem.startsWith('spec.replicas: must be'))).toBe(true);
  });

  it('refuses values its values.schema.json does not allow, naming the key at fault, before rendering anything', () => {
    expect(() => render({ bootstrap: inline, broker: { operationsLevel: 7 } })).toThrow(/broker\.operationsLevel: must be <= 3/);
    expect(() => render({ bootstrap: inline, broker: { toolSurface: 'everything' } })).toThrow(
      /broker\.toolSurface: must be equal to one of the allowed values/,
    );
    expect(() => render({ bootstrap: inline, broker: { persistance: { enabled: false } } })).toThrow(
      /broker: must NOT have additional properties \(persistance\)/,
    );
    expect(() => render({ bootstrap: inline, image: { pullPolicy: 'Sometimes' } })).toThrow(/image\.pullPolicy/);
    expect(() => render({ bootstrap: inline, agent: { healthPort: '7401' } })).toThrow(/agent\.healthPort: must be integer/);
    expect(() => render({ bootstrap: inline, agent: { labels: 'env prod' } })).toThrow(/agent\.labels: must match pattern/);
    expect(() => render({ bootstrap: { caPin: 'abc' } })).toThrow(/bootstrap\.caPin: must match pattern/);
    expect(() => render({ bootstrap: inline, broker: { resources: { limits: { memory: 'lots' } } } })).toThrow(/broker\.resources\.limits\.memory/);
    expect(() => render({ bootstrap: inline, agent: { commands: [{ name: 'df', argv: ['df'], level: 5 }] } })).toThrow(
      /agent\.commands\.0\.level: must be <= 3/,
    );
    expect(() => render({ bootstrap: inline, agent: { files: { path: '/host/etc/**' } } })).toThrow(
      /agent\.files: must NOT have additional properties \(path\)/,
    );
    // What values.yaml holds validates, and so does every install above.
    expect(valuesSchema(defaults)).toBe(true);
  });

  it('packages to fleetmesh-<version>.tgz as helm package lays it out: the chart folder, byte for byte', async () => {
    const out = join(temp.path, 'charts');
    const archive = await packageChart(out);
    expect(archive).toBe(join(out, `fleetmesh-${chart.version}.tgz`));
    const chartFiles = ['Chart.yaml', 'values.yaml', 'values.schema.json', ...readdirSync(TEMPLATES).map((file) => `templates/${file}`)].sort();
    const entries = (await runCommand('tar', ['-tzf', archive])).split('\n').filter((entry) => entry && !entry.endsWith('/'));
    expect(entries.sort()).toEqual(chartFiles.map((file) => `fleetmesh/${file}`));
    const unpacked = join(temp.path, 'unpacked');
    mkdirSync(unpacked);
    await runCommand('tar', ['-xzf', archive, '-C', unpacked]);
    for (const file of chartFiles) expect(readFileSync(join(unpacked, 'fleetmesh', file)).equals(readFileSync(join(CHART, file))), file).toBe(true);
    // The same chart makes the same archive.
    const again = await packageChart(join(temp.path, 'again'));
    expect(readFileSync(again).equals(readFileSync(archive))).toBe(true);
  });

  it.skipIf(!GO)("is rendered alike by Go's own text/template, the engine Helm runs, for every way of installing it", async () => {
    for (const [name, overrides] of Object.entries(installs())) {
      const byGo = await renderWithGo(overrides);
      const byTest = render(overrides);
      expect(byGo.notes, name).toBe(byTest.notes);
      expect(byGo.manifests, name).toEqual(byTest.manifests);
    }
    await expect(renderWithGo({})).rejects.toThrow(/set bootstrap\.existingSecret/);
    await expect(renderWithGo({ bootstrap: inline, cluster: { enabled: true } })).rejects.toThrow(/cluster\.existingSecret/);
  });

  it('the renderer refuses template constructs it does not implement', () => {
    const context = { Values: {}, Release: { Name: 'x', Namespace: 'y', Service: 'Helm' }, Chart: { Name: 'c', Version: '1', AppVersion: '1' } };
    expect(() => renderTemplate('{{ include "x" . }}', context)).toThrow(/unsupported/);
    expect(() => renderTemplate('{{ range .Values.x }}{{ end }}', context)).toThrow(/unsupported/);
    expect(() => renderTemplate('{{ .Values.x | upper }}', context)).toThrow(/unsupported function "upper"/);
    expect(() => renderTemplate('{{ if .Values.x }}', context)).toThrow(/if without end/);
    expect(renderTemplate('a  {{- if not .Values.x }} b {{ else }} c {{ end -}}  d', context)).toBe('a b d');
  });
});

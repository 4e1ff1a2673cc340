import type { ContainerInspectInfo } from 'dockerode';
import { describe, expect, it } from 'vitest';
import { recreatePlan } from './recreate-plan.ts';

const ID = 'c0ffee0123456789abcdef0123456789abcdef0123456789abcdef0123456789';

/** A compose service's container as an engine of API 1.41 inspects it: its own settings mixed with what its image gave it. */
function composeContainer(): ContainerInspectInfo {
  return {
    Id: ID,
    Name: '/shop_web_1',
    Image: 'sha256:old',
    State: { Running: true },
    Config: {
      Hostname: ID.slice(0, 12),
      User: '',
      Env: ['PATH=/bin', 'APP_VERSION=1', 'MODE=prod'],
      Cmd: ['httpd', '-f'],
      Entrypoint: null,
      Image: 'registry.test/shop/web:1',
      WorkingDir: '/www',
      Labels: { 'com.docker.compose.project': 'shop', 'com.docker.compose.service': 'web', 'org.example.version': '1', tier: 'front' },
      ExposedPorts: { '80/tcp': {}, '9000/tcp': {} },
      Volumes: { '/data': {} },
      Healthcheck: { Test: ['CMD', 'true'], Interval: 1_000_000_000 },
      Tty: false,
    },
    HostConfig: {
      Binds: ['shop_www:/www:rw'],
      NetworkMode: 'shop_default',
      PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '8080' }] },
      RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
      Links: ['/shop_db_1:/shop_web_1/db'],
      Memory: 268_435_456,
    },
    Mounts: [
      { Type: 'volume', Name: 'shop_www', Source: '/var/lib/docker/volumes/shop_www/_data', Destination: '/www', RW: true },
      { Type: 'volume', Name: 'f'.repeat(64), Source: '/var/lib/docker/volumes/fff/_data', Destination: '/data', RW: true },
    ],
    NetworkSettings: {
      Networks: {
        shop_default: { Aliases: ['web', ID.slice(0, 12)], IPAddress: '10.0.0.5', Gateway: '10.0.0.1', NetworkID: 'n1', EndpointID: 'e1' },
        shop_back: { Aliases: ['web'], IPAMConfig: { IPv4Address: '10.1.0.9' }, IPAddress: '10.1.0.9' },
      },
    },
  } as unknown as ContainerInspectInfo;
}

/** What the old image gave its containers. */
const OLD_IMAGE = {
  Env: ['PATH=/bin', 'APP_VERSION=1'],
  Cmd: ['httpd', '-f'],
  WorkingDir: '/www',
  Labels: { 'org.example.version': '1' },
  ExposedPorts: { '80/tcp': {} },
  Volumes: { '/data': {} },
  Healthcheck: { Test: ['CMD', 'true'], Interval: 1_000_000_000 },
};

describe('recreatePlan', () => {
  it("keeps the container's own settings and leaves out what its old image gave it, so the new image's own apply", () => {
    const { create } = recreatePlan(composeContainer(), OLD_IMAGE, 'registry.test/shop/web:2');
    expect(create).toMatchObject({
      name: 'shop_web_1',
      Image: 'registry.test/shop/web:2',
      Env: ['MODE=prod'],
      Labels: { 'com.docker.compose.project': 'shop', 'com.docker.compose.service': 'web', tier: 'front' },
      ExposedPorts: { '9000/tcp': {} },
      Volumes: {},
    });
    for (const field of ['Cmd', 'WorkingDir', 'Healthcheck', 'Hostname']) expect(create, field).not.toHaveProperty(field);
    expect(create.HostConfig).toMatchObject({
      Binds: ['shop_www:/www:rw'],
      PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '8080' }] },
      RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
      Memory: 268_435_456,
      Links: ['shop_db_1:db'],
    });
  });

  it('keeps a health check, command or variable the container set itself, even when its old image had another', () => {
    const info = composeContainer();
    info.Config.Healthcheck = { Test: ['CMD', 'wget', '-q', 'http://127.0.0.1/'] };
    info.Config.Cmd = ['httpd', '-f', '-p', '8080'];
    info.Config.Env = ['PATH=/bin', 'APP_VERSION=1-patched'];
    const { create } = recreatePlan(info, OLD_IMAGE, 'web:2');
    expect(create).toMatchObject({
      Healthcheck: { Test: ['CMD', 'wget', '-q', 'http://127.0.0.1/'] },
      Cmd: ['httpd', '-f', '-p', '8080'],
      Env: ['APP_VERSION=1-patched'],
    });
  });

  it('mounts an anonymous volume again by name, so its data stays, and leaves a named one to its bind', () => {
    const { create } = recreatePlan(composeContainer(), OLD_IMAGE, 'web:2');
    expect(create.HostConfig?.Mounts).toEqual([{ Type: 'volume', Source: 'f'.repeat(64), Target: '/data', ReadOnly: false }]);
  });

  it('creates it on its own network with its aliases (not the old id) and joins the others before it starts', () => {
    const plan = recreatePlan(composeContainer(), OLD_IMAGE, 'web:2');
    expect(plan.create.NetworkingConfig).toEqual({ EndpointsConfig: { shop_default: { Aliases: ['web'] } } });
    expect(plan.connect).toEqual([{ network: 'shop_back', endpoint: { Aliases: ['web'], IPAMConfig: { IPv4Address: '10.1.0.9' } } }]);
  });

  it('makes no endpoint for host networking, and works without the old image', () => {
    const info = composeContainer();
    info.HostConfig.NetworkMode = 'host';
    info.NetworkSettings.Networks = { host: {} } as unknown as ContainerInspectInfo['NetworkSettings']['Networks'];
    const plan = recreatePlan(info, undefined, 'web:2');
    expect(plan.create.NetworkingConfig).toBeUndefined();
    expect(plan.connect).toEqual([]);
    expect(plan.create).toMatchObject({ Env: ['PATH=/bin', 'APP_VERSION=1', 'MODE=prod'], Cmd: ['httpd', '-f'] });
  });
});

import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../../test/harness/temp-dir.ts';
import { RegistryCredentials } from './registry-credentials.ts';

const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');

describe('RegistryCredentials', () => {
  const temps: { remove(): void }[] = [];
  afterEach(() => {
    for (const temp of temps.splice(0)) temp.remove();
  });

  function configDir(config: unknown): string {
    const temp = makeTempDir('fm-docker-config-');
    temps.push(temp);
    if (config !== undefined) writeFileSync(join(temp.path, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
    return temp.path;
  }

  it("finds a registry's login in the config's auths under the keys docker login writes, and none for another registry", async () => {
    const dir = configDir({
      auths: {
        '127.0.0.1:5000': { auth: basic('deploy', 's3cret:with:colons') },
        'https://registry.example.com/v1/': { username: 'ci', password: 'pw' },
        'https://index.docker.io/v1/': { identitytoken: 'tok' },
      },
    });
    const credentials = new RegistryCredentials(dir);
    expect(await credentials.loginFor('127.0.0.1:5000')).toEqual({
      auth: { username: 'deploy', password: 's3cret:with:colons', serveraddress: '127.0.0.1:5000' },
      source: join(dir, 'config.json'),
    });
    expect((await credentials.loginFor('registry.example.com'))?.auth).toMatchObject({ username: 'ci', password: 'pw' });
    expect((await credentials.loginFor('docker.io'))?.auth).toEqual({ identitytoken: 'tok', serveraddress: 'https://index.docker.io/v1/' });
    expect(await credentials.loginFor('ghcr.io')).toBeUndefined();
  });

  it('pulls anonymously when the host has no Docker config, and says which file is broken when it cannot be read', async () => {
    expect(await new RegistryCredentials(configDir(undefined)).loginFor('127.0.0.1:5000')).toBeUndefined();
    const broken = configDir('{"auths": ');
    await expect(new RegistryCredentials(broken).loginFor('127.0.0.1:5000')).rejects.toMatchObject({
      code: 'collector_failed',
      message: expect.stringContaining(join(broken, 'config.json')),
    });
  });

  it('asks the credential helper named for the registry, without a shell, and falls back to auths when it holds no login', async () => {
    const bin = configDir(undefined);
    // A helper as Docker's tools call it: `get` with the server address on stdin, JSON on stdout.
    writeFileSync(
      join(bin, 'docker-credential-fm-test'),
      [
        '#!/bin/sh',
        'read server',
        'if [ "$server" = "gcr.example.com" ]; then echo \'{"ServerURL":"gcr.example.com","Username":"<token>","Secret":"refresh"}\'; exit 0; fi',
        'if [ "$server" = "127.0.0.1:5000" ]; then echo \'{"Username":"helper-user","Secret":"helper-pw"}\'; exit 0; fi',
        'echo "credentials not found in native keychain"; exit 1',
        '',
      ].join('\n'),
    );
    chmodSync(join(bin, 'docker-credential-fm-test'), 0o755);
    const dir = configDir({ credHelpers: { 'gcr.example.com': 'fm-test' }, credsStore: 'fm-test', auths: { 'other.example.com': { auth: basic('a', 'b') } } });
    const credentials = new RegistryCredentials(dir, { PATH: `${bin}:/usr/bin:/bin` });
    expect(await credentials.loginFor('gcr.example.com')).toEqual({
      auth: { identitytoken: 'refresh', serveraddress: 'gcr.example.com' },
      source: 'docker-credential-fm-test',
    });
    expect((await credentials.loginFor('127.0.0.1:5000'))?.auth).toMatchObject({ username: 'helper-user', password: 'helper-pw' });
    expect(await credentials.loginFor('other.example.com')).toMatchObject({ auth: { username: 'a', password: 'b' }, source: join(dir, 'config.json') });

    const missing = new RegistryCredentials(configDir({ credsStore: 'fm-absent' }), { PATH: bin });
    await expect(missing.loginFor('127.0.0.1:5000')).rejects.toMatchObject({
      code: 'collector_failed',
      message: expect.stringContaining("not on the agent's PATH"),
    });
  });
});

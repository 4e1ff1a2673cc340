import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngineClient } from './engine-client.ts';
import { engineAbsent } from './engine-errors.ts';

describe('createEngineClient on a socket', () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('fails the probes with the missing socket while there is none, then reaches the engine once it listens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-docker-api-'));
    dirs.push(dir);
    const socketPath = join(dir, 'docker.sock');
    const docker = createEngineClient(`unix://${socketPath}`);

    await expect(docker.version()).rejects.toThrow(`connect ENOENT ${socketPath}`);
    await expect(docker.getEvents({})).rejects.toThrow('ENOENT');
    await expect(docker.listContainers()).rejects.toThrow('ENOENT');
    const dialed = await new Promise<unknown>((resolve) => docker.modem.dial({ path: '/info?', method: 'GET', statusCodes: { 200: true } }, resolve));
    expect(String(dialed)).toContain('ENOENT');

    const engine = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ Version: '27.0.0', ApiVersion: '1.46' }));
    });
    servers.push(engine);
    await new Promise<void>((resolve) => engine.listen(socketPath, resolve));
    expect((await docker.version()).Version).toBe('27.0.0');
  });

  it('says the engine is absent while its socket was never there, and failed once a socket that existed is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-docker-api-'));
    dirs.push(dir);
    const socketPath = join(dir, 'docker.sock');
    const docker = createEngineClient(`unix://${socketPath}`);
    const refusal = (work: () => Promise<unknown>) =>
      work().then(
        () => Promise.reject(new Error('expected a refusal')),
        (error: unknown) => error,
      );

    expect(engineAbsent(await refusal(() => docker.version()))).toBe(true);
    expect(engineAbsent(await refusal(() => docker.listContainers()))).toBe(true);

    const engine = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ Version: '27.0.0', ApiVersion: '1.46' }));
    });
    await new Promise<void>((resolve) => engine.listen(socketPath, resolve));
    expect((await docker.version()).Version).toBe('27.0.0');
    await new Promise((resolve) => engine.close(resolve));
    rmSync(socketPath, { force: true });

    const gone = await refusal(() => docker.version());
    expect(gone).toBeInstanceOf(Error);
    expect(engineAbsent(gone)).toBe(false);
  });
});

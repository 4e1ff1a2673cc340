import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../shared/options/command-line.ts';
import { BROKER_COMMAND, resolveBrokerOptions } from './broker-options.ts';

describe('broker options', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('reads the /metrics token from --metrics-token-file, its variable or the config file, and stops on a missing file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-broker-options-'));
    dirs.push(dir);
    const tokenFile = join(dir, 'metrics-token');
    writeFileSync(tokenFile, 'scrape-secret\n');
    const configFile = join(dir, 'broker.yaml');
    writeFileSync(configFile, `metrics-token-file: ${tokenFile}\n`);
    const resolved = (argv: string[], env: NodeJS.ProcessEnv = {}) => resolveBrokerOptions(parseCommandLine(BROKER_COMMAND, argv, env).values);
    expect(resolved([]).metricsToken).toBeUndefined();
    expect(resolved(['--metrics-token-file', tokenFile]).metricsToken).toBe('scrape-secret');
    expect(resolved([], { FLEETMESH_METRICS_TOKEN_FILE: tokenFile }).metricsToken).toBe('scrape-secret');
    expect(resolved(['--config', configFile]).metricsToken).toBe('scrape-secret');
    expect(() => resolved(['--metrics-token-file', join(dir, 'nope')])).toThrow(/--metrics-token-file .*nope does not exist/);
  });
});

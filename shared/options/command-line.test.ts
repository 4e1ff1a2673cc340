import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CommandSpec, formatHelp, parseCommandLine, unknownVariablesWarning } from './command-line.ts';

const spec = {
  name: 'demo',
  summary: 'a demo',
  usage: 'fleetmesh demo',
  configFile: true,
  flags: {
    listen: { type: 'string', description: 'where', default: '0.0.0.0:1' },
    interval: { type: 'duration', description: 'how often', default: '5s' },
    count: { type: 'integer', description: 'how many', min: 1, max: 9 },
    labels: { type: 'labels', description: 'labels', default: {} },
    verbose: { type: 'boolean', description: 'talk', default: false },
  },
} as const satisfies CommandSpec;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function config(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fm-config-'));
  dirs.push(dir);
  const path = join(dir, 'c.yaml');
  writeFileSync(path, text);
  return path;
}

describe('command lines', () => {
  it('takes a flag over the environment over the config file over the default', () => {
    const file = config('listen: from-config:1\ninterval: 7s\ncount: 3\n');
    const env = { FLEETMESH_INTERVAL: '9s', FLEETMESH_LISTEN: 'from-env:1' };
    const parsed = parseCommandLine(spec, ['--config', file, '--listen', 'from-flag:1'], env);
    expect(parsed.values).toMatchObject({ listen: 'from-flag:1', interval: 9000, count: 3, labels: {}, verbose: false });
  });

  it('accepts snake_case config keys and YAML mappings for labels', () => {
    const file = config('labels:\n  role: db\n');
    expect(parseCommandLine(spec, ['--config', file], {}).values.labels).toEqual({ role: 'db' });
  });

  it('names the flag, variable or key at fault', () => {
    expect(() => parseCommandLine(spec, ['--count', '12'], {})).toThrow(/--count must be between 1 and 9, not 12/);
    expect(() => parseCommandLine(spec, [], { FLEETMESH_COUNT: 'many' })).toThrow(/FLEETMESH_COUNT must be a whole number/);
    expect(() => parseCommandLine(spec, ['--config', config('colour: red\n')], {})).toThrow(/unknown key "colour"/);
    expect(() => parseCommandLine(spec, ['--config', config('a: [\n')], {})).toThrow(/is not valid YAML/);
    expect(() => parseCommandLine(spec, ['extra'], {})).toThrow(/unexpected argument "extra"/);
  });

  it('prints help with defaults and environment variables', () => {
    const help = formatHelp(spec);
    expect(help).toMatch(/--interval DURATION\s+how often \(default 5s; env FLEETMESH_INTERVAL\)/);
    expect(help).toMatch(/--config FILE/);
  });
});

describe('unknown environment variables', () => {
  it('names each FLEETMESH_ variable the command does not read, with the closest one it does', () => {
    const warning = unknownVariablesWarning(spec, { FLEETMESH_LABEL: 'role=web', FLEETMESH_LISTEN: 'x:1', FLEETMESH_ZZZZZZZZZZZZ: '1', PATH: '/bin' });
    expect(warning).toBe(
      'warning: FLEETMESH_LABEL (did you mean FLEETMESH_LABELS?), FLEETMESH_ZZZZZZZZZZZZ are not settings of this command, ignored (--help lists the variables it reads)',
    );
  });

  it('says nothing of its own variables, the config file, or those read elsewhere', () => {
    expect(
      unknownVariablesWarning(spec, { FLEETMESH_LISTEN: 'x:1', FLEETMESH_CONFIG: 'c.yaml', FLEETMESH_MCP_TOKEN: 't', FLEETMESH_UID: '1000' }),
    ).toBeUndefined();
  });
});

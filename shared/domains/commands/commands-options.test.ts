import { chmodSync, chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import { resolveCommandsOptions } from './commands-options.ts';

describe('the --commands file as the agent reads it when it starts', () => {
  const temp = makeTempDir('fm-commands-options-');
  afterAll(() => temp.remove());
  const file = (name: string, mode: number) => {
    const path = join(temp.path, name);
    writeFileSync(path, '- name: disk\n  argv: [df, -h]\n');
    chmodSync(path, mode);
    return path;
  };

  it('reads a file only its owner may write, and nothing without the flag', () => {
    const path = file('commands.yaml', 0o600);
    expect(resolveCommandsOptions(path)).toMatchObject({ file: path, commands: [{ name: 'disk', program: '/usr/bin/df' }] });
    expect(resolveCommandsOptions(undefined)).toEqual({ file: undefined, commands: [] });
  });

  it('refuses a file its group or others may write, or another user owns: they would choose what the agent runs', () => {
    const shared = file('shared.yaml', 0o664);
    expect(() => resolveCommandsOptions(shared)).toThrow(`--commands ${shared} may be written by its group or by others`);
    const foreign = file('foreign.yaml', 0o644);
    chownSync(foreign, 65534, 65534);
    expect(() => resolveCommandsOptions(foreign, 0)).toThrow(`--commands ${foreign} is owned by uid 65534, neither root nor the agent's user`);
    // The agent's own user may own it.
    expect(resolveCommandsOptions(foreign, 65534).commands).toHaveLength(1);
    expect(() => resolveCommandsOptions(join(temp.path, 'absent.yaml'))).toThrow(`--commands ${join(temp.path, 'absent.yaml')} cannot be read (ENOENT)`);
  });
});

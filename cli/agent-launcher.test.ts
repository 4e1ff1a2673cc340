import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../test/harness/temp-dir.ts';
import { agentLauncher } from './agent-launcher.ts';
import { freeAgentName } from './free-agent-name.ts';

describe('agentLauncher', () => {
  const temps: { path: string; remove(): void }[] = [];
  afterEach(() => {
    for (const temp of temps.splice(0)) temp.remove();
  });

  /** A fleetmesh package at <root>/pkg, with its bin. */
  function packageIn(root: string): string {
    const pkg = join(root, 'pkg');
    mkdirSync(join(pkg, 'bin'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), '{"name":"fleetmesh"}');
    writeFileSync(join(pkg, 'bin', 'fleetmesh.js'), '');
    chmodSync(join(pkg, 'bin', 'fleetmesh.js'), 0o755);
    return pkg;
  }

  it('prints fleetmesh where the one on PATH is this package, npx fleetmesh in its checkout, node and the bin elsewhere', () => {
    const temp = makeTempDir();
    temps.push(temp);
    const pkg = packageIn(temp.path);
    const away = join(temp.path, 'elsewhere');
    mkdirSync(join(pkg, 'src'), { recursive: true });
    mkdirSync(away);
    expect(agentLauncher({ path: '/usr/bin', cwd: pkg, packageRoot: pkg })).toBe('npx fleetmesh');
    expect(agentLauncher({ path: '/usr/bin', cwd: join(pkg, 'src'), packageRoot: pkg })).toBe('npx fleetmesh');
    expect(agentLauncher({ path: '/usr/bin', cwd: away, packageRoot: pkg })).toBe(`node ${join(pkg, 'bin', 'fleetmesh.js')}`);
    const globalBin = join(temp.path, 'global-bin');
    mkdirSync(globalBin);
    symlinkSync(join(pkg, 'bin', 'fleetmesh.js'), join(globalBin, 'fleetmesh'));
    expect(agentLauncher({ path: `/usr/bin:${globalBin}`, cwd: away, packageRoot: pkg })).toBe('fleetmesh');
    // A project that has it in node_modules runs it through npx.
    const project = join(temp.path, 'project');
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    symlinkSync(pkg, join(project, 'node_modules', 'fleetmesh'));
    expect(agentLauncher({ path: '/usr/bin', cwd: project, packageRoot: pkg })).toBe('npx fleetmesh');
  });

  it('names a new agent so that it collides with no enrolled one', () => {
    expect(freeAgentName('vm', ['web-1'])).toBe('vm');
    expect(freeAgentName('vm', ['VM', 'vm-2'])).toBe('vm-3');
  });
});

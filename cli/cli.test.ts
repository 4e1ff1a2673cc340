import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envName, VARIABLES_READ_ELSEWHERE } from '../shared/options/command-line.ts';
import { COMMANDS } from './cli.ts';

describe('the command index', () => {
  it('lists each command under the name and summary its spec carries', async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect({ name: command.spec.name, summary: command.spec.summary }).toEqual({ name: entry.name, summary: entry.summary });
    }
  });

  it('knows every FLEETMESH_ variable docker-compose.yml uses, as a flag or as read elsewhere', async () => {
    const flagVariables = new Set<string>();
    for (const entry of COMMANDS) {
      for (const [flag, spec] of Object.entries((await entry.load()).spec.flags)) {
        const name = envName(flag, spec);
        if (name) flagVariables.add(name);
      }
    }
    const compose = readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8');
    const used = [...new Set([...compose.matchAll(/\b(FLEETMESH_[A-Z0-9_]+)/g)].map((m) => m[1] as string))];
    expect(used.filter((name) => !flagVariables.has(name) && !VARIABLES_READ_ELSEWHERE.includes(name))).toEqual([]);
  });
});

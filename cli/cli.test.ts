import { describe, expect, it } from 'vitest';
import { COMMANDS } from './cli.ts';

describe('the command index', () => {
  it('lists each command under the name and summary its spec carries', async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect({ name: command.spec.name, summary: command.spec.summary }).toEqual({ name: entry.name, summary: entry.summary });
    }
  });
});

import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../shared/options/command-line.ts';
import { callCommand } from './call-command.ts';
import { optionArguments } from './option-arguments.ts';

describe('options of fleetmesh call that are tool parameters', () => {
  it('keeps options that are none of its flags, with their values, and still reads its own', () => {
    const parsed = parseCommandLine(callCommand.spec, ['processes', '--sort_by', 'mem', '--host', 'web-1', '--limit=5', '--all'], {});
    expect(parsed.positionals).toEqual(['processes']);
    expect(parsed.values.host).toBe('web-1');
    expect(parsed.extra).toEqual([
      ['sort_by', 'mem'],
      ['limit', '5'],
      ['all', 'true'],
    ]);
  });

  it('takes an option as the parameter it names, and refuses another with the exact --arg spelling', () => {
    expect(
      optionArguments(
        'processes',
        [
          ['sort_by', 'mem'],
          ['limit', '5'],
        ],
        ['sort_by', 'limit'],
      ),
    ).toEqual({ sort_by: 'mem', limit: 5 });
    expect(optionArguments('processes', [['sort-by', 'cpu']], ['sort_by'])).toEqual({ sort_by: 'cpu' });
    expect(() => optionArguments('processes', [['sortby', 'mem']], ['sort_by', 'limit'])).toThrow(
      expect.objectContaining({
        message: "unknown option '--sortby'",
        hint: 'processes has no parameter sortby; its parameters: sort_by, limit (each as --arg NAME=VALUE).',
      }),
    );
    expect(() => optionArguments('nothing_such', [['sort_by', 'mem']], undefined)).toThrow(
      expect.objectContaining({ hint: 'Tool arguments go as --arg sort_by=mem.' }),
    );
  });
});

import { describe, expect, it } from 'vitest';
import type { CommandDefinition } from '../../../shared/domains/commands/command-definition.ts';
import { parseCommandFile } from '../../../shared/domains/commands/command-file.ts';
import { SystemAccounts } from '../../../shared/options/system-accounts.ts';
import { commandArgv } from './command-argv.ts';

const [grep, tail, anything] = parseCommandFile(
  `
- name: grep_log
  argv: [/usr/bin/grep, -F, -e, "{text}", "{file}"]
  params:
    text: { type: string, pattern: "[A-Za-z0-9 _.:-]+" }
    file: { type: enum, values: [/var/log/syslog, /var/log/auth.log] }
- name: tail_log
  argv: [/usr/bin/tail, -n, "{lines}", "{name}"]
  params:
    lines: { type: integer, min: 1, max: 500, default: 50 }
    name: { type: string, pattern: "/var/log/[a-z0-9_./-]+" }
- name: echo_any
  argv: [/bin/echo, "{word}"]
  params:
    word: { type: string, pattern: "[\\\\s\\\\S]*", max_length: 100, allow_dash: true }
`,
  'commands.yaml',
  { accounts: new SystemAccounts('', ''), agentUid: 0, isProgram: () => true },
) as [CommandDefinition, CommandDefinition, CommandDefinition];

const refusal = (command: CommandDefinition, params: Record<string, string | number>) => {
  try {
    return `ran ${JSON.stringify(commandArgv(command, params))}`;
  } catch (error) {
    return (error as Error).message;
  }
};

describe('the argv of a named command', () => {
  it('puts each parameter in its place as one whole argument, defaults included', () => {
    expect(commandArgv(grep, { text: 'Failed password', file: '/var/log/auth.log' })).toEqual([
      '/usr/bin/grep',
      '-F',
      '-e',
      'Failed password',
      '/var/log/auth.log',
    ]);
    expect(commandArgv(tail, { name: '/var/log/syslog' })).toEqual(['/usr/bin/tail', '-n', '50', '/var/log/syslog']);
    expect(commandArgv(tail, { name: '/var/log/syslog', lines: '007' })).toEqual(['/usr/bin/tail', '-n', '7', '/var/log/syslog']);
  });

  it('refuses shell metacharacters a pattern does not allow, whichever way they are written', () => {
    for (const text of ['x; rm -rf /', '$(id)', '`id`', 'a | nc evil 1', 'a && reboot', 'a\nreboot', 'a > /etc/passwd', "it's"]) {
      expect(refusal(grep, { text, file: '/var/log/syslog' }), text).toBe(
        `grep_log: text ${JSON.stringify(text)} does not match its pattern [A-Za-z0-9 _.:-]+`,
      );
    }
  });

  it('keeps a value its pattern allows in one argument, metacharacters and all: no shell ever reads it', () => {
    for (const word of ['x; rm -rf /', '$(id)', '`id`', 'a | b && c', 'line\nbreak', '*']) {
      expect(commandArgv(anything, { word })).toEqual(['/bin/echo', word]);
    }
  });

  it('refuses option injection unless the parameter allows a dash, and a .. segment whatever the pattern allows', () => {
    expect(refusal(tail, { name: '/var/log/../../etc/shadow' })).toBe('tail_log: name "/var/log/../../etc/shadow" holds a .. path segment');
    expect(refusal(grep, { text: '-r', file: '/var/log/syslog' })).toBe(
      'grep_log: text "-r" starts with "-", which the program would read as an option (the parameter does not say allow_dash: true)',
    );
    expect(refusal(tail, { name: '/var/log/syslog', lines: -5 })).toBe('tail_log: lines must be at least 1, not -5');
    expect(commandArgv(anything, { word: '-n' })).toEqual(['/bin/echo', '-n']);
    expect(refusal(anything, { word: '..' })).toBe('echo_any: word ".." holds a .. path segment');
  });

  it('refuses an integer given as anything but digits, an enum value not listed, and a value past its length', () => {
    expect(refusal(tail, { name: '/var/log/syslog', lines: '1; ls' })).toBe('tail_log: lines must be a whole number, not "1; ls"');
    expect(refusal(tail, { name: '/var/log/syslog', lines: 1.5 })).toBe('tail_log: lines must be a whole number, not 1.5');
    expect(refusal(tail, { name: '/var/log/syslog', lines: '1e3' })).toBe('tail_log: lines must be a whole number, not "1e3"');
    expect(refusal(grep, { text: 'x', file: '/etc/shadow' })).toBe('grep_log: file must be one of /var/log/syslog, /var/log/auth.log, not "/etc/shadow"');
    expect(refusal(grep, { text: 'x', file: '/var/log/syslog ' })).toMatch(/^grep_log: file must be one of/);
    expect(refusal(anything, { word: 'w'.repeat(101) })).toBe('echo_any: word is 101 characters, more than its 100');
    expect(refusal(anything, { word: 'a\0b' })).toBe('echo_any: word holds a NUL character');
  });

  it('refuses a parameter the command does not declare, and a missing one', () => {
    expect(refusal(grep, { text: 'x', file: '/var/log/syslog', extra: '1' })).toBe('grep_log takes no parameter extra');
    expect(refusal(grep, { text: 'x' })).toBe('grep_log needs its parameter file');
    // As parameters arrive from the wire: an own __proto__ key is one more unknown name.
    expect(refusal(grep, JSON.parse('{"text":"x","file":"/var/log/syslog","__proto__":"y"}'))).toBe('grep_log takes no parameter __proto__');
    expect(refusal(grep, JSON.parse('{"text":"x","constructor":"y"}'))).toBe('grep_log takes no parameter constructor');
  });
});

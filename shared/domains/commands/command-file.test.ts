import { describe, expect, it } from 'vitest';
import { SystemAccounts } from '../../options/system-accounts.ts';
import { argvTemplate } from './command-definition.ts';
import { type CommandFileContext, parseCommandFile } from './command-file.ts';

const PROGRAMS = new Set(['/usr/bin/df', '/usr/bin/systemctl', '/usr/bin/journalctl', '/opt/tools/check']);
const context: CommandFileContext = {
  accounts: new SystemAccounts('root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n', 'root:x:0:\nnogroup:x:65534:\n'),
  agentUid: 0,
  isProgram: (path) => PROGRAMS.has(path),
};
const parse = (text: string, given: CommandFileContext = context) => parseCommandFile(text, '/etc/fleetmesh/commands.yaml', given);

describe('the commands file', () => {
  it('reads each command with its typed parameters, its program found on the fixed PATH, and the defaults', () => {
    const [disk, restart] = parse(`
- name: disk_usage
  description: Disk usage of one mount point
  argv: [df, -h, "{mount}"]
  params:
    mount: { type: enum, values: [/, /var] }
- name: restart_unit
  argv: [/usr/bin/systemctl, restart, "{unit}"]
  params:
    unit: { type: string, pattern: "[a-z0-9@._-]+\\\\.service", default: nginx.service }
  timeout_s: 20
  output_kib: 16
  run_as: nobody
  level: 2
  destructive: true
`);
    expect(disk).toMatchObject({ name: 'disk_usage', program: '/usr/bin/df', level: 1, destructive: false, timeoutS: 30, outputKib: 64, runAs: undefined });
    expect(argvTemplate(disk as never)).toEqual(['/usr/bin/df', '-h', '{mount}']);
    expect(disk?.params[0]).toMatchObject({ name: 'mount', type: 'enum', values: ['/', '/var'], allowDash: false, default: undefined });
    expect(restart).toMatchObject({ level: 2, destructive: true, timeoutS: 20, outputKib: 16, runAs: { name: 'nobody', uid: 65534, gid: 65534 } });
    expect(restart?.params[0]).toMatchObject({ type: 'string', pattern: '[a-z0-9@._-]+\\.service', maxLength: 256, default: 'nginx.service' });
    expect(restart?.params[0]?.matcher?.test('nginx.service; ls')).toBe(false);
    expect(parse('')).toEqual([]);
  });

  it('refuses a parameter joined with other text, an undeclared one, an unused one and a parameter as the program', () => {
    const problems: [string, string][] = [
      [
        'argv: [df, "--path={dir}"]\n  params: {dir: {type: enum, values: [a]}}',
        'argv[1] "--path={dir}" joins {dir} with other text: a parameter must be a whole argument',
      ],
      ['argv: [df, "{dir}"]', 'argv[1] uses {dir}, which params does not declare'],
      ['argv: [df]\n  params: {dir: {type: enum, values: [a]}}', 'params dir appear nowhere in argv'],
      ['argv: ["{dir}"]\n  params: {dir: {type: enum, values: [/usr/bin/df]}}', 'argv[0] must be the program itself, never a parameter'],
      ['argv: [nosuchprogram]', 'argv[0] "nosuchprogram" is on no directory of'],
      ['argv: [./df]', 'argv[0] "./df" must be an absolute path or a bare program name'],
      ['argv: [/usr/bin/missing]', 'argv[0] /usr/bin/missing is not a program this agent can run'],
    ];
    for (const [body, message] of problems)
      expect(() => parse(`- name: c\n  ${body}`), body).toThrow(`--commands /etc/fleetmesh/commands.yaml: command c: ${message}`);
  });

  it('refuses loose parameter declarations: a string without a pattern, a bad pattern, keys of another type, a dashed enum value, a failing default', () => {
    const problems: [string, string][] = [
      ['{type: string}', 'a string parameter needs a pattern its values must match whole'],
      ['{type: string, pattern: "(a"}', 'pattern is not a regular expression'],
      ['{type: enum, values: [a], pattern: x}', 'pattern is not for a parameter of type enum'],
      ['{type: integer, min: 5, max: 1}', 'min 5 is above max 1'],
      ['{type: enum, values: [-rf, a]}', 'values -rf start with "-": say allow_dash: true if they are meant as options'],
      ['{type: integer, max: 10, default: 50}', 'default: must be at most 10, not 50'],
      ['{type: enum}', 'an enum lists its values'],
    ];
    for (const [spec, message] of problems) {
      expect(() => parse(`- name: c\n  argv: [df, "{p}"]\n  params:\n    p: ${spec}`), spec).toThrow(`command c: params.p: ${message}`);
    }
  });

  it('refuses level 0, unknown keys, a repeated name, an unknown user, and a user the agent cannot become', () => {
    expect(() => parse('- name: c\n  argv: [df]\n  level: 0')).toThrow(
      'command c: level: a command is level 1 to 3: every run is audited, none is a level-0 read',
    );
    expect(() => parse('- name: c\n  argv: [df]\n  shell: true')).toThrow('command c: Unrecognized key: "shell"');
    expect(() => parse('- name: c\n  argv: [df]\n- name: c\n  argv: [df]')).toThrow('command c: declared twice');
    expect(() => parse('- name: c\n  argv: [df]\n  run_as: mallory')).toThrow('command c: run_as: no user "mallory" on this machine');
    expect(() => parse('- name: c\n  argv: [df]\n  run_as: root', { ...context, agentUid: 1000 })).toThrow(
      'command c: run_as: the agent runs as uid 1000 and cannot become root (uid 0); run it as root, or drop run_as',
    );
    expect(() => parse('- name: Bad Name\n  argv: [df]')).toThrow('command Bad Name: name: a name is lower-case letters');
    expect(() => parse('name: c')).toThrow('--commands /etc/fleetmesh/commands.yaml: ');
  });
});

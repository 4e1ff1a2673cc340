import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_PATH } from '../../../shared/domains/commands/command-definition.ts';
import { isProgram, parseCommandFile } from '../../../shared/domains/commands/command-file.ts';
import { commandList, commandRun } from '../../../shared/domains/commands/commands-actions.ts';
import { silentLogger } from '../../../shared/log/logger.ts';
import { SystemAccounts } from '../../../shared/options/system-accounts.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import { waitFor } from '../../../test/harness/wait.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { CommandsCollector } from './commands-collector.ts';

describe('named commands run by the agent as real processes', () => {
  const temp = makeTempDir('fm-commands-');
  const canary = join(temp.path, 'canary');
  const tool = join(temp.path, 'tool');
  let commands: CollectorCalls<CommandsCollector>;
  const collectors: CollectorCalls<CommandsCollector>[] = [];

  /** A collector of these declarations, read as the agent reads its --commands file. */
  /** `file` null: no --commands at all. */
  const declaring = (yaml: string, file: string | null = join(temp.path, 'commands.yaml')) => {
    const declared = parseCommandFile(yaml, file ?? '', { accounts: SystemAccounts.read(), agentUid: process.getuid?.() ?? 0, isProgram });
    const calls = new CollectorCalls(() => new CommandsCollector({ file: file ?? undefined, commands: declared }, silentLogger), {} as EngineClient);
    collectors.push(calls);
    return calls;
  };
  const run = (params: Record<string, unknown>, call: { callerLevel?: number; deadlineMs?: number } = {}) =>
    commands.call(commandRun, params as never, { callerLevel: 1, ...call });

  beforeAll(() => {
    copyFileSync('/bin/true', tool);
    commands = declaring(`
- name: echo_any
  argv: [echo, "{word}"]
  params:
    word: { type: string, pattern: "[\\\\s\\\\S]*", max_length: 200 }
- name: ids
  argv: [id]
  run_as: nobody
- name: environment
  argv: [env]
- name: nap
  argv: [sleep, "{seconds}"]
  params:
    seconds: { type: integer, min: 1, max: 60 }
  timeout_s: 1
- name: long_nap
  argv: [sleep, "30"]
  timeout_s: 30
- name: chatter
  argv: [yes]
  output_kib: 1
- name: leave_behind
  argv: [sh, -c, "sleep 300 & echo $!"]
- name: fail
  argv: ["false"]
- name: reboot_host
  description: stands for an impactful fix
  argv: [echo, rebooting]
  level: 3
- name: make_file
  argv: [touch, "{name}"]
  params:
    name: { type: string, pattern: "${temp.path}/[a-z]+" }
  destructive: true
- name: vanishing
  argv: [${tool}]
`);
  });
  afterAll(async () => {
    for (const calls of collectors) await calls.stop();
    temp.remove();
  });

  it('runs no shell: metacharacters in a value reach the program as one argument, and nothing else runs', async () => {
    writeFileSync(canary, 'alive');
    for (const word of [
      `x; rm -f ${canary}`,
      `$(rm -f ${canary})`,
      `\`rm -f ${canary}\``,
      `x && rm -f ${canary}`,
      `x | rm -f ${canary}`,
      `x\nrm -f ${canary}`,
    ]) {
      const answer = await run({ name: 'echo_any', params: { word } });
      expect(answer.errors).toEqual([]);
      expect(answer.payload).toMatchObject({ name: 'echo_any', argv: ['/usr/bin/echo', word], exit_code: 0, signal: null });
      expect(answer.payload?.lines.map((line) => line.text)).toEqual(word.split('\n'));
    }
    expect(readFileSync(canary, 'utf8')).toBe('alive');
  });

  it('runs as the declared user without the agent’s groups, with PATH as its only environment', async () => {
    const ids = await run({ name: 'ids' });
    expect(ids.payload).toMatchObject({
      run_as: 'nobody',
      exit_code: 0,
      lines: [{ stream: 'stdout', text: 'uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)' }],
    });
    const environment = await run({ name: 'environment' });
    expect(environment.payload?.lines).toEqual([{ stream: 'stdout', text: `PATH=${COMMAND_PATH}` }]);
    expect(environment.payload?.run_as).toBe('root');
  });

  it('answers a failing command with its exit code and what it wrote', async () => {
    const answer = await run({ name: 'fail' });
    expect(answer.errors).toEqual([]);
    expect(answer.payload).toMatchObject({ argv: ['/usr/bin/false'], exit_code: 1, signal: null, lines: [], output_bytes: 0 });
    expect(answer.payload?.stopped_reason).toBeUndefined();
  });

  it('stops a command at its timeout, at its output cap, and at the call’s deadline, saying which', async () => {
    const slow = await run({ name: 'nap', params: { seconds: 30 } });
    expect(slow.payload).toMatchObject({
      argv: ['/usr/bin/sleep', '30'],
      exit_code: null,
      signal: 'SIGTERM',
      stopped_reason: 'stopped at its timeout of 1 s (timeout_s)',
    });
    const loud = await run({ name: 'chatter' });
    expect(loud.payload).toMatchObject({ output_bytes: 1024, stopped_reason: 'stopped when its output passed 1 KiB (output_kib); the lines before are kept' });
    expect(new Set(loud.payload?.lines.map((line) => line.text))).toEqual(new Set(['y']));
    const cut = await run({ name: 'long_nap' }, { deadlineMs: 2500 });
    expect(cut.payload?.stopped_reason).toMatch(
      /^stopped after \d+\.\d s at the call's deadline, before its own timeout of 30 s: call again with timeout_ms 35000$/,
    );
  });

  it('leaves nothing running behind: what a command started is stopped when it ends', async () => {
    const answer = await run({ name: 'leave_behind' });
    const pid = Number(answer.payload?.lines[0]?.text);
    expect(pid).toBeGreaterThan(1);
    // Gone, or a zombie until its new parent reaps it.
    const state = () => (existsSync(`/proc/${pid}/stat`) ? (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? 'gone') : 'gone');
    await waitFor(() => ['gone', 'Z', 'X'].includes(state()), { what: `the background sleep ${pid} to be stopped` });
  });

  it('refuses a command above the caller’s level, and runs it for a caller at that level', async () => {
    const refused = await run({ name: 'reboot_host' }, { callerLevel: 2 });
    expect(refused.payload).toBeNull();
    expect(refused.errors).toEqual([
      expect.objectContaining({ code: 'forbidden', message: "reboot_host is level 3 on this host, above this identity's level 2" }),
    ]);
    expect((await run({ name: 'reboot_host' }, { callerLevel: 3 })).payload?.lines).toEqual([{ stream: 'stdout', text: 'rebooting' }]);
  });

  it('runs a destructive command only with confirm, naming the argv it would run', async () => {
    const target = join(temp.path, 'made');
    const asked = await run({ name: 'make_file', params: { name: target } });
    expect(asked.errors).toEqual([
      expect.objectContaining({
        code: 'confirm_required',
        message: `make_file is destructive; on this host it would run ${JSON.stringify(['/usr/bin/touch', target])}`,
      }),
    ]);
    expect(existsSync(target)).toBe(false);
    expect((await run({ name: 'make_file', params: { name: target }, confirm: true })).payload?.exit_code).toBe(0);
    expect(existsSync(target)).toBe(true);
    // The pattern is matched whole: a path that begins inside it and goes on elsewhere is no match.
    const elsewhere = await run({ name: 'make_file', params: { name: `${target}/../../../etc/x` }, confirm: true });
    expect(elsewhere.errors[0]).toMatchObject({ code: 'invalid_argument' });
  });

  it('refuses a name that is not declared, pointing at the closest', async () => {
    const answer = await run({ name: 'echo' });
    expect(answer.errors).toEqual([expect.objectContaining({ code: 'not_found', message: 'no command "echo" is declared on this host' })]);
    expect(answer.errors[0]?.hint).toBe('Closest: echo_any. command_list shows the 11 declared here.');
  });

  it('says so when a declared program is gone', async () => {
    rmSync(tool);
    const answer = await run({ name: 'vanishing' });
    expect(answer.errors).toEqual([expect.objectContaining({ code: 'collector_failed', message: `${tool} could not be started: ENOENT` })]);
  });

  it('lists the declarations, with where parameters go', async () => {
    const listed = await commands.call(commandList, {});
    expect(listed.payload?.count).toBe(11);
    expect(listed.payload?.commands.find((command) => command.name === 'nap')).toEqual({
      name: 'nap',
      description: '',
      argv: ['/usr/bin/sleep', '{seconds}'],
      params: [{ name: 'seconds', type: 'integer', min: 1, max: 60, allow_dash: false }],
      level: 1,
      destructive: false,
      timeout_s: 1,
      output_kib: 64,
      run_as: 'root',
    });
  });

  it('says how to declare commands where none are', async () => {
    const none = declaring('', null);
    expect(await none.collector.probe()).toEqual({ available: false, absent: true, reason: 'no commands are declared (--commands)' });
    for (const answer of [await none.call(commandRun, { name: 'x' }), await none.call(commandList, {})]) {
      expect(answer.errors).toEqual([
        expect.objectContaining({
          code: 'collector_unavailable',
          message: 'no commands are declared on this host',
          hint: expect.stringMatching(/^Declare them in a YAML file given to the agent as --commands FILE/),
        }),
      ]);
    }
  });
});

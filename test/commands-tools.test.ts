import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess } from './harness/cli-process.ts';
import { call, identityToken, mcpClient, text } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

describe('named commands through the broker, run by an agent process', () => {
  const temp = makeTempDir('fm-commands-tools-');
  const canary = join(temp.path, 'canary');
  let fleet: TestFleet;
  let agent: CliProcess;
  let ops: Client;

  beforeAll(async () => {
    const file = join(temp.path, 'commands.yaml');
    writeFileSync(
      file,
      `
- name: say
  description: Echoes one word
  argv: [echo, "{word}"]
  params:
    word: { type: string, pattern: "[\\\\s\\\\S]*", max_length: 200 }
- name: count_to
  argv: [seq, "{n}"]
  params:
    n: { type: integer, min: 1, max: 5 }
- name: whoami
  argv: [id, -un]
  run_as: nobody
- name: mark
  argv: [touch, "{name}"]
  params:
    name: { type: string, pattern: "${temp.path}/[a-z]+" }
  destructive: true
- name: reboot_host
  argv: [echo, rebooting]
  level: 3
`,
      { mode: 0o600 },
    );
    writeFileSync(canary, 'alive');
    fleet = await startTestFleet();
    agent = new CliProcess([...(await fleet.agentArgs('ssh-less')), '--commands', file]);
    await waitFor(() => fleet.broker.registry.find('ssh-less')?.state === 'online', { what: 'the agent online', timeoutMs: 60_000 });
    ops = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1, undefined, 'ops'));
  }, 90_000);

  afterAll(async () => {
    await ops?.close();
    await agent?.stop();
    await fleet?.stop();
    temp.remove();
  });

  const run = (args: Record<string, unknown>) => call(ops, 'command_run', { host: 'ssh-less', ...args });

  it('runs a declared command by name, its output fenced as data, and audits the argv that ran', async () => {
    const word = `x; rm -f ${canary} && $(reboot) | \`id\``;
    const answer = await run({ name: 'say', params: { word } });
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent).toMatchObject({
      host: 'ssh-less',
      argv: ['/usr/bin/echo', word],
      exit_code: 0,
      lines: [{ stream: 'stdout', text: word }],
    });
    expect(existsSync(canary)).toBe(true);
    // The line is quoted as data (a code span), never Markdown a model could read as ours.
    expect(text(answer)).toContain(`\`x; rm -f ${canary} && $(reboot) \\| 'id'\``);
    const [row] = await fleet.broker.store.audit.recent({ limit: 1, identity: 'ops' });
    expect(row).toMatchObject({ tool: 'command_run', outcome: 'ok', targets: ['ssh-less'], arguments: { host: 'ssh-less', name: 'say', params: { word } } });
    expect(row?.note).toBe(`ssh-less: argv=${JSON.stringify(['/usr/bin/echo', word])}`);
  });

  it('runs a command as its declared user', async () => {
    const answer = await run({ name: 'whoami' });
    expect(answer.structuredContent).toMatchObject({ run_as: 'nobody', argv: ['/usr/bin/id', '-un'], lines: [{ stream: 'stdout', text: 'nobody' }] });
  });

  it('refuses what the declaration does not allow, with nothing run', async () => {
    const refusals: [Record<string, unknown>, string, string][] = [
      [{ name: 'count_to', params: { n: '1; ls' } }, 'invalid_argument', 'count_to: n must be a whole number, not "1; ls"'],
      [{ name: 'count_to', params: { n: 9 } }, 'invalid_argument', 'count_to: n must be at most 5, not 9'],
      [{ name: 'say', params: { word: '-n' } }, 'invalid_argument', 'say: word "-n" starts with "-"'],
      [{ name: 'mark', params: { name: `${temp.path}/a/../../x` }, confirm: true }, 'invalid_argument', 'does not match its pattern'],
      [{ name: 'sh', params: { c: 'id' } }, 'not_found', 'no command "sh" is declared on this host'],
    ];
    for (const [args, code, message] of refusals) {
      const answer = await run(args);
      expect(answer.isError, JSON.stringify(args)).toBe(true);
      expect((answer.structuredContent.errors as { code: string; message: string }[])[0]).toMatchObject({ code, message: expect.stringContaining(message) });
    }
  });

  it('needs confirm for a destructive command, naming the argv it would run', async () => {
    const target = join(temp.path, 'made');
    const asked = await run({ name: 'mark', params: { name: target } });
    expect((asked.structuredContent.errors as { code: string; message: string }[])[0]).toMatchObject({
      code: 'confirm_required',
      message: `mark is destructive; on this host it would run ${JSON.stringify(['/usr/bin/touch', target])}`,
    });
    expect(existsSync(target)).toBe(false);
    expect((await run({ name: 'mark', params: { name: target }, confirm: true })).structuredContent).toMatchObject({ exit_code: 0 });
    expect(existsSync(target)).toBe(true);
  });

  it("refuses a command above the caller's level on the host, and the refusal audit keeps the command asked for", async () => {
    const answer = await run({ name: 'reboot_host' });
    expect((answer.structuredContent.errors as { code: string; message: string }[])[0]).toMatchObject({
      code: 'forbidden',
      message: "reboot_host is level 3 on this host, above this identity's level 1",
    });
    const refused = await fleet.broker.store.audit.recent({ limit: 10, refused: true, identity: 'ops' });
    expect(refused.map((row) => [row.tool, row.targets, row.errorCode, row.reason, row.arguments])).toContainEqual([
      'command_run',
      ['ssh-less'],
      'forbidden',
      "ssh-less refused: reboot_host is level 3 on this host, above this identity's level 1",
      { host: 'ssh-less', name: 'reboot_host' },
    ]);
    const admin = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3, undefined, 'admin'));
    expect((await call(admin, 'command_run', { host: 'ssh-less', name: 'reboot_host' })).structuredContent).toMatchObject({ lines: [{ text: 'rebooting' }] });
    await admin.close();
  });

  it('lists the declared commands', async () => {
    const listed = await call(ops, 'command_list', { host: 'ssh-less' });
    expect((listed.structuredContent.commands as { name: string }[]).map((command) => command.name)).toEqual([
      'say',
      'count_to',
      'whoami',
      'mark',
      'reboot_host',
    ]);
  });
});

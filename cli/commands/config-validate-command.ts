import { readFileSync } from 'node:fs';
import { AGENT_COMMAND, resolveAgentOptions } from '../../agent/agent-options.ts';
import { BROKER_COMMAND, resolveBrokerOptions } from '../../broker/broker-options.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { parseCommandLine } from '../../shared/options/command-line.ts';
import { type ConfigIssue, checkConfigText } from '../../shared/options/config-check.ts';
import { defineCommand } from '../command.ts';

/** The commands whose --config this checks, with the start checks each runs. */
const PROGRAMS = {
  broker: { flags: BROKER_COMMAND.flags, start: (file: string) => resolveBrokerOptions(parseCommandLine(BROKER_COMMAND, ['--config', file], {}).values) },
  agent: { flags: AGENT_COMMAND.flags, start: (file: string) => resolveAgentOptions(parseCommandLine(AGENT_COMMAND, ['--config', file], {}).values) },
} as const;

function issueLine(file: string, issue: ConfigIssue): string {
  return `${file}:${issue.line ?? '-'}: ${issue.severity}: ${issue.message} (${issue.code})`;
}

export const configValidateCommand = defineCommand({
  spec: {
    name: 'config validate',
    summary: "Check a broker's or an agent's --config file before starting it: every problem, with its line.",
    usage: 'fleetmesh config validate broker|agent FILE [--strict]',
    positionals: [
      { name: 'PROGRAM', description: 'broker or agent: whose options the file holds', required: true },
      { name: 'FILE', description: 'the YAML config file', required: true },
    ],
    flags: { strict: { type: 'boolean', description: 'warnings (loose file modes, a key set twice) fail too', default: false, env: false } },
  },
  async run(parsed, io) {
    const [program, file] = parsed.positionals as [string, string];
    if (program !== 'broker' && program !== 'agent') {
      throw new FleetError('invalid_argument', `"${program}" is neither broker nor agent`, { hint: 'Usage: fleetmesh config validate broker|agent FILE' });
    }
    const { flags, start } = PROGRAMS[program];
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new FleetError('invalid_argument', `config file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    const issues = checkConfigText(text, { flags, resolve: () => start(file) });
    for (const issue of issues) io.stdout(`${issueLine(file, issue)}\n`);
    const errors = issues.filter((issue) => issue.severity === 'error').length;
    const warnings = issues.length - errors;
    const valid = errors === 0 && (!parsed.values.strict || warnings === 0);
    io.stdout(`${file}: ${valid ? 'valid' : 'not valid'} (${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'})\n`);
    return valid ? 0 : 1;
  },
});

import { Agent } from '../../agent/agent.ts';
import { AGENT_COMMAND, resolveAgentOptions } from '../../agent/agent-options.ts';
import type { FleetError } from '../../shared/errors/fleet-error.ts';
import { createLogger } from '../../shared/log/logger.ts';
import { defineCommand } from '../command.ts';
import { untilSignal } from '../until-signal.ts';

/** Exit code of an agent that cannot go on by itself (revoked, or expired with no token). */
const AGENT_FATAL_EXIT = 3;

export const agentCommand = defineCommand({
  spec: AGENT_COMMAND,
  async run(parsed, io) {
    const options = { ...resolveAgentOptions(parsed.values, io.env.DOCKER_HOST), configPath: parsed.configPath };
    const log = createLogger({ level: options.logLevel, format: options.logFormat });
    const agent = await Agent.start(options, log);
    const ended = await Promise.race([untilSignal().then((signal) => ({ signal })), agent.connection.fatal.then((error: FleetError) => ({ error }))]);
    await agent.stop();
    if ('error' in ended) return AGENT_FATAL_EXIT;
    log.info('agent stopped', { signal: ended.signal });
    return 0;
  },
});

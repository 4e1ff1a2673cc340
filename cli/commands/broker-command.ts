import { Broker } from '../../broker/broker.ts';
import { BROKER_COMMAND, resolveBrokerOptions } from '../../broker/broker-options.ts';
import { createLogger } from '../../shared/log/logger.ts';
import { defineCommand } from '../command.ts';
import { untilSignal } from '../until-signal.ts';

export const brokerCommand = defineCommand({
  spec: BROKER_COMMAND,
  async run(parsed) {
    const options = resolveBrokerOptions(parsed.values);
    const log = createLogger({ level: options.logLevel, format: options.logFormat });
    const broker = await Broker.start(options, log);
    const signal = await untilSignal();
    log.info('stopping the broker', { signal });
    await broker.stop();
    return 0;
  },
});

import type { DomainBrokerFlagValues } from '../../shared/domains/domains.ts';
import { BROKER_SERVICES } from '../domains/broker-domains.ts';
import type { BrokerServiceContext, BrokerServicePlugin } from './broker-service.ts';

/** Each service's options by its name; a service not named runs with its defaults. */
export type BrokerServiceOptions = Readonly<Record<string, unknown>>;

/** Every service's options from the domains' broker flags. */
export function resolveServiceOptions(flags: DomainBrokerFlagValues): BrokerServiceOptions {
  return Object.fromEntries(BROKER_SERVICES.map((plugin) => [plugin.name, plugin.options(flags)]));
}

/** The running services of one broker, each found by its plugin. */
export class BrokerServices {
  private readonly running = new Map<BrokerServicePlugin, object>();

  constructor(options: BrokerServiceOptions, context: BrokerServiceContext, plugins: readonly BrokerServicePlugin[] = BROKER_SERVICES) {
    for (const plugin of plugins) this.running.set(plugin, plugin.start(plugin.name in options ? options[plugin.name] : plugin.defaults, context));
  }

  get<O, S extends object>(plugin: BrokerServicePlugin<O, S>): S {
    const service = this.running.get(plugin as unknown as BrokerServicePlugin);
    if (!service) throw new Error(`broker service ${plugin.name} is not running`);
    return service as S;
  }

  stop(): void {
    for (const [plugin, service] of this.running) plugin.stop?.(service);
  }
}

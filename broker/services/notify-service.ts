import { notifyDomain } from '../../shared/domains/notify/notify-domain.ts';
import { Notifier } from '../notify/notifier.ts';
import { NO_NOTIFICATIONS, resolveNotifyOptions } from '../notify/notify-options.ts';
import { defineBrokerService } from './broker-service.ts';

/** The notification channels: incidents, alert crossings and agents offline sent out; notify_test sends through them. */
export const notifyService = defineBrokerService({
  name: 'notify',
  domain: notifyDomain,
  options: resolveNotifyOptions,
  defaults: NO_NOTIFICATIONS,
  start(notify, context) {
    const notifier = new Notifier({ notify, ...context });
    notifier.start();
    return notifier;
  },
  stop: (notifier) => notifier.stop(),
});

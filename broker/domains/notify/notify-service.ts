import { notifyDomain } from '../../../shared/domains/notify/notify-domain.ts';
import { defineBrokerService } from '../../services/broker-service.ts';
import { Notifier } from './notifier.ts';
import { NO_NOTIFICATIONS, resolveNotifyOptions } from './notify-options.ts';

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

import { notifyTest } from '../../../shared/domains/notify/notify-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { defineBrokerAction } from '../../calls/broker-action.ts';
import { notifyService } from './notify-service.ts';

/** notify_test: one message through each configured channel, each channel's result. */
export const notifyTestHandler = defineBrokerAction({
  action: notifyTest,
  async run(params, context) {
    const notifier = context.services.get(notifyService);
    if (notifier.channels.length === 0) {
      throw new FleetError('collector_unavailable', 'the broker has no notification channel configured', {
        hint: 'Start the broker with --notify-webhook, --notify-ntfy, --notify-gotify, --notify-slack, --notify-discord or --notify-telegram.',
      });
    }
    const deliveries = await notifier.send({
      event: 'test',
      severity: 'info',
      title: 'fleetmesh: test notification',
      text: params.message ?? `A test from the fleetmesh broker, sent by ${context.identity.name}.`,
      key: 'test',
      time_unix_ms: Date.now(),
    });
    const failed = deliveries.filter((d) => !d.ok).length;
    return { channels: deliveries, sent: deliveries.length - failed, failed };
  },
});

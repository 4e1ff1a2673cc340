import { isIPv4 } from 'node:net';
import { formatSubnet } from '../../../shared/domains/network/ipv4.ts';
import { sendMagicPacket, wake } from '../../../shared/domains/network/network-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { BrokerActionContext } from '../../calls/broker-action.ts';
import { defineBrokerAction } from '../../calls/broker-action.ts';
import { fanOut } from '../../fanout/fan-out.ts';
import { chooseWakeSender, LIMITED_BROADCAST, type WakeSender } from './wake-sender.ts';
import { wakeService } from './wake-service.ts';
import { normalizeMac } from './wake-targets.ts';

/** How long the chosen agent has to send the packet. */
const SEND_TIMEOUT_MS = 10_000;

interface WakePlan {
  mac: string;
  broadcast: string;
  sender: WakeSender;
}

function plan(params: { target: string; broadcast?: string | undefined }, context: BrokerActionContext): WakePlan {
  const targets = context.services.get(wakeService).targets;
  const named = targets.find((t) => t.name.toLowerCase() === params.target.toLowerCase());
  const mac = named?.mac ?? normalizeMac(params.target);
  if (!mac) {
    const names = targets.map((t) => t.name);
    throw new FleetError('not_found', `"${params.target}" is neither a MAC address nor a configured wake target`, {
      hint: names.length ? `Configured targets: ${names.join(', ')}.` : 'Give a MAC address (aa:bb:cc:dd:ee:ff), or configure names with --wake-target.',
    });
  }
  const broadcast = params.broadcast ?? named?.broadcast ?? LIMITED_BROADCAST;
  if (!isIPv4(broadcast)) throw new FleetError('invalid_argument', `broadcast "${broadcast}" is not an IPv4 address`, { hint: 'Such as 192.168.1.255.' });
  const permitted = context.visibleHosts().filter((host) => context.identity.grants.host(host.name, 'write'));
  return { mac, broadcast, sender: chooseWakeSender(permitted, broadcast) };
}

/** wake: the broker chooses an agent on the target's segment, and that agent sends the magic packet. */
export const wakeHandler = defineBrokerAction({
  action: wake,
  sends: [sendMagicPacket.id],
  targets(params, context) {
    return [plan(params, context).sender.host.name];
  },
  async run(params, context) {
    const { mac, broadcast, sender } = plan(params, context);
    const [answer] = await fanOut([sender.host], {
      action: sendMagicPacket.id,
      params: { mac, broadcast },
      timeoutMs: SEND_TIMEOUT_MS,
      caller: context.identity.name,
      signal: context.signal,
      ...(context.authority ? { authority: context.authority } : {}),
      ...(context.auditId ? { auditId: context.auditId } : {}),
    });
    const outcome = answer?.outcome;
    if (!outcome?.ok || outcome.errors.length) {
      const error = outcome ? (outcome.ok ? outcome.errors[0] : outcome.error) : undefined;
      throw new FleetError(
        error?.code === 'agent_offline' || error?.code === 'agent_disconnected' ? error.code : 'collector_failed',
        `agent ${sender.host.name} could not send the magic packet: ${error?.message ?? 'no answer'}`,
        {
          hint: error?.hint || 'Try again, or pass broadcast to have another agent on the segment send it.',
        },
      );
    }
    const sent = outcome.payload as { bytes: number };
    return {
      target: params.target,
      mac,
      broadcast,
      sent_by: sender.host.name,
      sent_by_subnet: sender.subnet ? formatSubnet(sender.subnet) : null,
      bytes: sent.bytes,
    };
  },
});

import { isIPv4 } from 'node:net';
import { FleetError } from '../../../shared/errors/fleet-error.ts';

/** A machine wake knows by name. */
export interface WakeTarget {
  name: string;
  /** Lower case, colon separated. */
  mac: string;
  /** The broadcast address of its segment, which tells which agents share it. */
  broadcast: string | undefined;
}

/** `aa:bb:cc:dd:ee:ff`, `AA-BB-…` or `aabbccddeeff` → `aa:bb:cc:dd:ee:ff`; undefined when it is not a MAC address. */
export function normalizeMac(text: string): string | undefined {
  const hex = text.trim().toLowerCase().replace(/[:.-]/g, '');
  if (!/^[0-9a-f]{12}$/.test(hex)) return undefined;
  return hex.match(/../g)?.join(':');
}

/** The --wake-target entries; a malformed one stops the broker with one line. */
export function parseWakeTargets(entries: readonly string[]): WakeTarget[] {
  return entries.map((entry) => {
    const match = /^([A-Za-z0-9_.-]+)=([^@]+)(?:@(.+))?$/.exec(entry.trim());
    const mac = match?.[2] ? normalizeMac(match[2]) : undefined;
    const broadcast = match?.[3];
    if (!match?.[1] || !mac || (broadcast !== undefined && !isIPv4(broadcast))) {
      throw new FleetError('invalid_argument', `--wake-target "${entry}" is not NAME=MAC or NAME=MAC@BROADCAST`, {
        hint: 'For example nas=aa:bb:cc:dd:ee:ff@192.168.1.255.',
      });
    }
    return { name: match[1], mac, broadcast };
  });
}

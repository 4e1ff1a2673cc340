import { FleetError } from '../../shared/errors/fleet-error.ts';
import { parseHostPort } from '../../shared/options/values.ts';

/**
 * The brokers an agent may dial, from `--broker a:7443,b:7443`: any broker of
 * a cluster serves any agent, so when one fails the agent tries the next. A
 * single name that resolves to several addresses is one entry: gRPC tries
 * each address it resolves to in turn.
 */
export function parseBrokerAddresses(text: string, what = '--broker'): string[] {
  const addresses = [...new Set(text.split(',').map((part) => part.trim()))].filter((part) => part !== '');
  if (addresses.length === 0) {
    throw new FleetError('invalid_argument', `${what} names no broker`, { hint: 'Write it as host:port, or several as host1:7443,host2:7443.' });
  }
  for (const address of addresses) parseHostPort(address, what);
  return addresses;
}

/**
 * Which of `count` addresses to dial after a failure on the one at `index`:
 * another one, at random. The agents of a broker that died then spread over
 * the others; each choosing the next in its list sent them all to one broker.
 */
export function nextAddressIndex(index: number, count: number, random: () => number = Math.random): number {
  if (count <= 1) return 0;
  return (index + 1 + Math.floor(random() * (count - 1))) % count;
}

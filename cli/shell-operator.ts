import { hostname, userInfo } from 'node:os';

/** The operator at the broker's shell (who holds its data dir), as the audit names them when a command changes the broker's records. */
export function shellOperator(): { name: string } {
  return { name: `operator:${userInfo().username}@${hostname()}` };
}

import { join } from 'node:path';
import { BROKER_PID_FILE, processAlive, readPid } from '../broker/broker.ts';

/** Whether a broker process is running on this data dir (its pid file names a live process). */
export function brokerRunning(dataDir: string): boolean {
  const pid = readPid(join(dataDir, BROKER_PID_FILE));
  return pid !== undefined && processAlive(pid);
}

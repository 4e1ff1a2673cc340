import { createLogger, type Logger } from '../../shared/log/logger.ts';

/** A logger whose JSON lines a test can read back. */
export function captureLogger(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: 'debug', format: 'json', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

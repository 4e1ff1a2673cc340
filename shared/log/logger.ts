import { terminalCell } from '../format/terminal-safe.ts';

/**
 * Structured logs on stderr: one line an event, `text` for people, `json` for
 * collectors. Secrets never reach a logger: callers pass names and ids, not
 * tokens or keys.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

interface LoggerOptions {
  level: LogLevel;
  format: LogFormat;
  /** Where lines go; stderr by default. */
  write?: (line: string) => void;
}

function renderValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /[\s="]/.test(text ?? '') ? JSON.stringify(text) : (text ?? 'undefined');
}

export function createLogger(options: LoggerOptions, bound: LogFields = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const emit = (level: LogLevel, message: string, fields: LogFields = {}) => {
    if (RANK[level] < RANK[options.level]) return;
    const all = { ...bound, ...fields };
    const time = new Date().toISOString();
    // One line, whatever an agent's name or error holds: its control characters are spelled out (JSON stays the same JSON).
    if (options.format === 'json') {
      const plain = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, v instanceof Error ? v.message : v]));
      write(terminalCell(JSON.stringify({ time, level, message, ...plain })));
      return;
    }
    const rest = Object.entries(all)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${renderValue(v)}`)
      .join(' ');
    write(terminalCell(`${time} ${level.padEnd(5)} ${message}${rest ? ` ${rest}` : ''}`));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(options, { ...bound, ...fields }),
  };
}

/** A logger that drops everything, for library use and unit tests. */
export const silentLogger: Logger = createLogger({ level: 'error', format: 'text', write: () => {} });

import { FleetError } from '../errors/fleet-error.ts';

const DURATION_UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Parses `500ms`, `10s`, `5m`, `1h`, `30d` or `1h30m` into milliseconds. */
export function parseDurationMs(text: string, what = 'duration'): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    throw new FleetError('invalid_argument', `${what} "${text}" has no unit`, {
      hint: 'Write it with a unit, such as 500ms, 10s, 5m, 1h or 30d.',
    });
  }
  const pattern = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let matched = 0;
  for (let match = pattern.exec(trimmed); match !== null; match = pattern.exec(trimmed)) {
    total += Number(match[1]) * (DURATION_UNITS_MS[match[2] ?? ''] ?? 0);
    matched = pattern.lastIndex;
  }
  if (trimmed.length === 0 || matched !== trimmed.length || total <= 0) {
    throw new FleetError('invalid_argument', `${what} "${text}" is not a duration`, {
      hint: 'Write it with a unit, such as 500ms, 10s, 5m, 1h or 30d.',
    });
  }
  return Math.round(total);
}

/** Renders milliseconds as the largest whole units, for messages (`1h30m`, `45s`). */
export function formatDurationMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.slice(0, 2).join('');
}

const LABEL_KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,62}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^[A-Za-z0-9._:/@+-]{0,128}$/;

/** Parses `k=v,k2=v2` into a label map, refusing keys or values a selector could not express. */
export function parseLabels(text: string, what = 'labels'): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of text.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) {
      throw new FleetError('invalid_argument', `${what}: "${item}" is not key=value`, {
        hint: 'Write labels as key=value pairs separated by commas, such as role=db,env=prod.',
      });
    }
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (!LABEL_KEY.test(key)) {
      throw new FleetError('invalid_argument', `${what}: "${key}" is not a valid label key`, {
        hint: 'A label key is 1-64 letters, digits, ".", "_", "/" or "-", starting and ending with a letter or digit.',
      });
    }
    if (!LABEL_VALUE.test(value)) {
      throw new FleetError('invalid_argument', `${what}: the value of "${key}" has characters a label cannot hold`, {
        hint: 'A label value is at most 128 letters, digits or ._:/@+- characters.',
      });
    }
    labels[key] = value;
  }
  return labels;
}

export function formatLabels(labels: Record<string, string>): string {
  return Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** Splits `host:port` (and `[v6]:port`), checking the port. */
export function parseHostPort(text: string, what: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[3]);
  if (!match || port < 0 || port > 65535) {
    throw new FleetError('invalid_argument', `${what} "${text}" is not host:port`, {
      hint: 'Write it as host:port, such as 0.0.0.0:7443 or broker.example.com:7443.',
    });
  }
  return { host: match[1] ?? match[2] ?? '', port };
}

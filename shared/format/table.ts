import { terminalCell } from './terminal-safe.ts';

/** A plain-text table for terminals: columns padded to their widest cell, each cell on one line whatever a host put in it. */
export function formatTable(headers: string[], cells: string[][]): string {
  const rows = cells.map((row) => row.map(terminalCell));
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** "3m ago", "2h ago", "5d ago": how long ago a time was, for tables. */
export function formatAgo(unixMs: number | null, now = Date.now()): string {
  if (unixMs === null) return 'never';
  const seconds = Math.max(0, Math.round((now - unixMs) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

/** "in 29d", "in 5h", "expired": how far ahead a time is. */
export function formatUntil(unixMs: number | null, now = Date.now()): string {
  if (unixMs === null) return '-';
  const seconds = Math.round((unixMs - now) / 1000);
  if (seconds <= 0) return 'expired';
  if (seconds < 3600) return `in ${Math.ceil(seconds / 60)}m`;
  if (seconds < 86_400) return `in ${Math.floor(seconds / 3600)}h`;
  return `in ${Math.floor(seconds / 86_400)}d`;
}

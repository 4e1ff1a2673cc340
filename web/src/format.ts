/** How the components show figures: the unit is in every field name, and here on screen. */

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value >= 100 || unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function formatPercent(percent: number | null | undefined): string {
  return percent === null || percent === undefined ? '–' : `${percent.toFixed(1)} %`;
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${Math.floor(seconds % 60)}s`;
}

export function formatAgo(unixMs: number | null | undefined, now = Date.now()): string {
  if (unixMs === null || unixMs === undefined) return 'never';
  const seconds = Math.max(0, Math.round((now - unixMs) / 1000));
  return seconds < 60 ? `${seconds}s ago` : `${formatDuration(seconds)} ago`;
}

export function formatTime(unixMs: number | null | undefined): string {
  return unixMs === null || unixMs === undefined ? '–' : new Date(unixMs).toLocaleString();
}

/** A container's published and exposed ports as the engine lists them: 8080→80/tcp, 53/udp; – for none. */
export function formatPorts(ports: readonly { private_port?: number; public_port?: number | null; protocol?: string }[] | undefined): string {
  return (ports ?? []).map((p) => (p.public_port ? `${p.public_port}→${p.private_port}/${p.protocol}` : `${p.private_port}/${p.protocol}`)).join(', ') || '–';
}

/** Any value as a short line of text (objects as compact JSON). */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '–';
  if (typeof value === 'object') return Array.isArray(value) ? value.map(formatValue).join(', ') : JSON.stringify(value);
  return String(value);
}

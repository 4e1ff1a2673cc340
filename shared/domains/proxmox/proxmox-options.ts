import { resolve } from 'node:path';
import { FleetError } from '../../errors/fleet-error.ts';
import { DEFAULT_PROXMOX_ENDPOINT } from './proxmox-flags.ts';

/** DESIGN §6: no API call may hold a handler longer than this. */
const DEFAULT_PROXMOX_TIMEOUT_MS = 10_000;
/** The largest answer read from the API; /cluster/resources of a big cluster is well under it. */
const DEFAULT_PROXMOX_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
const DEFAULT_PROXMOX_INVENTORY_INTERVAL_MS = 60_000;

/** How the API's certificate is trusted. `system` (none of the flags) uses Node's CA store and the host name. */
export type ProxmoxTrust = { kind: 'fingerprint'; sha256Hex: string } | { kind: 'ca'; caFile: string } | { kind: 'insecure' } | { kind: 'system' };

export interface ProxmoxOptions {
  /** `https://host:port`, without a path. */
  endpoint: string;
  /** Holds `USER@REALM!TOKENID=SECRET` of the token used for every read. */
  tokenFile: string;
  /** The token for power actions; without it they are refused. */
  actionTokenFile: string | undefined;
  trust: ProxmoxTrust;
  timeoutMs: number;
  maxResponseBytes: number;
  /** How often the guests are reported to the broker's index (default a minute; also shortly after a power action). */
  inventoryIntervalMs: number;
}

export interface ProxmoxFlagValues {
  endpoint: string | undefined;
  tokenFile: string | undefined;
  actionTokenFile: string | undefined;
  fingerprint: string | undefined;
  caFile: string | undefined;
  insecure: boolean;
}

function invalid(message: string, hint: string): FleetError {
  return new FleetError('invalid_argument', message, { hint });
}

/** `AB:CD:…`, `abcd…` or `sha256:…` → 64 lower-case hex digits. */
function normalizeFingerprint(text: string): string {
  const hex = text
    .trim()
    .replace(/^sha256:/i, '')
    .replaceAll(':', '')
    .toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw invalid(
      `--proxmox-fingerprint "${text}" is not a SHA-256 fingerprint`,
      'Give the 64 hex digits (colons allowed) that pvenode cert info prints as "Fingerprint (sha256)" on the host.',
    );
  }
  return hex;
}

function parseEndpoint(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`--proxmox-endpoint "${text}" is not a URL`, `Write it as ${DEFAULT_PROXMOX_ENDPOINT} or https://pve.example.com:8006.`);
  }
  if (url.protocol !== 'https:') {
    throw invalid(`--proxmox-endpoint "${text}" must use https`, 'The Proxmox VE API is served over HTTPS only, usually on port 8006.');
  }
  if ((url.pathname !== '/' && url.pathname !== '/api2/json' && url.pathname !== '/api2/json/') || url.search || url.username || url.password) {
    throw invalid(
      `--proxmox-endpoint "${text}" must be only a scheme, host and port`,
      `Write it as ${DEFAULT_PROXMOX_ENDPOINT}; the collector adds /api2/json.`,
    );
  }
  return url.origin;
}

/**
 * The collector's configuration from the agent's flags, or undefined when none
 * of them asks for Proxmox VE. Only the flags' syntax is checked here; the files
 * they name are read by the collector, whose errors carry the `configuration`
 * class, so a broken token file costs that collector and not the whole agent.
 */
export function resolveProxmoxOptions(values: ProxmoxFlagValues): ProxmoxOptions | undefined {
  const trustFlags = [
    values.fingerprint !== undefined && '--proxmox-fingerprint',
    values.caFile !== undefined && '--proxmox-ca-file',
    values.insecure && '--proxmox-insecure',
  ].filter((flag): flag is string => typeof flag === 'string');
  if (values.endpoint === undefined && values.tokenFile === undefined) {
    const stray = [values.actionTokenFile !== undefined && '--proxmox-action-token-file', ...trustFlags].filter(Boolean);
    if (stray.length) {
      throw invalid(
        `${stray.join(', ')} given without --proxmox-token-file`,
        'Give --proxmox-token-file (and --proxmox-endpoint unless the API is on this host).',
      );
    }
    return undefined;
  }
  if (values.tokenFile === undefined) {
    throw invalid('--proxmox-endpoint needs --proxmox-token-file', 'Give the file holding the read token, as USER@REALM!TOKENID=SECRET.');
  }
  if (trustFlags.length > 1) {
    throw invalid(`${trustFlags.join(' and ')} exclude each other`, 'Trust the API one way: a fingerprint pin, a CA file, or (for tests only) insecure.');
  }
  let trust: ProxmoxTrust = { kind: 'system' };
  if (values.fingerprint !== undefined) trust = { kind: 'fingerprint', sha256Hex: normalizeFingerprint(values.fingerprint) };
  else if (values.caFile !== undefined) trust = { kind: 'ca', caFile: resolve(values.caFile) };
  else if (values.insecure) trust = { kind: 'insecure' };
  return {
    endpoint: parseEndpoint(values.endpoint ?? DEFAULT_PROXMOX_ENDPOINT),
    tokenFile: resolve(values.tokenFile),
    actionTokenFile: values.actionTokenFile === undefined ? undefined : resolve(values.actionTokenFile),
    trust,
    timeoutMs: DEFAULT_PROXMOX_TIMEOUT_MS,
    maxResponseBytes: DEFAULT_PROXMOX_MAX_RESPONSE_BYTES,
    inventoryIntervalMs: DEFAULT_PROXMOX_INVENTORY_INTERVAL_MS,
  };
}

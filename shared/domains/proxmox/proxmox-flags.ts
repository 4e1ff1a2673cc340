import type { FlagSpec } from '../../options/command-line.ts';

/** Where the collector looks when a token file is given without an endpoint: the API of the node the agent runs on. */
export const DEFAULT_PROXMOX_ENDPOINT = 'https://127.0.0.1:8006';

/** The agent flags of the proxmox collector: none given, the host has no Proxmox VE for fleetmesh. */
export const PROXMOX_FLAGS = {
  'proxmox-endpoint': {
    type: 'string',
    description: `the Proxmox VE API of this node (default ${DEFAULT_PROXMOX_ENDPOINT} once a token file is given)`,
    placeholder: 'URL',
  },
  'proxmox-token-file': {
    type: 'string',
    description: 'file holding the read API token, USER@REALM!TOKENID=SECRET; enables the proxmox collector',
    placeholder: 'FILE',
  },
  'proxmox-action-token-file': {
    type: 'string',
    description: 'file holding a separate API token for guest start, reboot and shutdown (without it they are refused)',
    placeholder: 'FILE',
  },
  'proxmox-fingerprint': { type: 'string', description: "SHA-256 fingerprint of the API's certificate to pin (hex, colons allowed)", placeholder: 'HEX' },
  'proxmox-ca-file': { type: 'string', description: "PEM file of the CA that signed the API's certificate (/etc/pve/pve-root-ca.pem)", placeholder: 'FILE' },
  'proxmox-insecure': { type: 'boolean', description: "skip verifying the API's certificate (reported by get_fleet_status)", default: false },
} as const satisfies Record<string, FlagSpec>;

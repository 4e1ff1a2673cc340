import type { FlagSpecs } from '../../options/command-line.ts';

/** Where the system bus listens on a systemd host; an agent in a container gets the host's mounted at the same path. */
export const DEFAULT_SYSTEM_BUS_SOCKET = '/run/dbus/system_bus_socket';

/** The `fleetmesh agent` flags of the systemd collector (resolved in systemd-options.ts). */
export const SYSTEMD_FLAGS = {
  'journal-dir': {
    type: 'string',
    description:
      "the host's journal as mounted into the agent's container (its /var/log/journal, read-only): journal_query reads it with journalctl --directory; unset, journalctl reads the journal of the system it runs on",
    placeholder: 'DIR',
  },
  'system-bus': {
    type: 'string',
    description: `the host's D-Bus system bus socket, through which systemd's units are listed, read and restarted (mount the host's into a container)`,
    default: DEFAULT_SYSTEM_BUS_SOCKET,
    placeholder: 'SOCKET',
  },
  journalctl: {
    type: 'string',
    description: 'the journalctl program that reads the journal',
    default: 'journalctl',
    placeholder: 'PATH',
  },
} as const satisfies FlagSpecs;

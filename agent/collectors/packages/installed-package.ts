/** One installed package as a database holds it. */
export interface InstalledPackage {
  name: string;
  /** The full version in its ecosystem's spelling (dpkg and rpm with the epoch when it is not 0). */
  version: string;
  architecture: string | null;
  /** When it was installed, where the database keeps it (rpm's INSTALLTIME): what a reboot check compares with the boot. */
  installedUnixMs?: number;
}

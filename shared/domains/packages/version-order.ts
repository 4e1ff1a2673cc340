import { compareApkVersions } from './apk-version.ts';
import { compareDpkgVersions } from './dpkg-version.ts';
import { compareRpmVersions } from './rpm-version.ts';

/** The package databases the agent reads, each with its own version ordering. */
export const ECOSYSTEMS = ['dpkg', 'rpm', 'apk'] as const;
export type Ecosystem = (typeof ECOSYSTEMS)[number];

/** The version ordering of an ecosystem: negative when `a` is older than `b`. */
export function versionOrder(ecosystem: Ecosystem): (a: string, b: string) => number {
  return { dpkg: compareDpkgVersions, rpm: compareRpmVersions, apk: compareApkVersions }[ecosystem];
}

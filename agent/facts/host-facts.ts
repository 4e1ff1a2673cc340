import { readFileSync } from 'node:fs';
import { arch, cpus, hostname, platform, release, totalmem } from 'node:os';

function osName(): string {
  try {
    const text = readFileSync('/etc/os-release', 'utf8');
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(text)?.[1];
    if (pretty) return pretty;
  } catch {
    // not Linux, or no os-release
  }
  return platform();
}

/** The facts about this host that do not change while the agent runs. */
export function hostFacts(): { hostname: string; os: string; kernel: string; arch: string; cpuCores: number; memoryTotalBytes: bigint } {
  return {
    hostname: hostname(),
    os: osName(),
    kernel: release(),
    arch: arch(),
    cpuCores: cpus().length,
    memoryTotalBytes: BigInt(totalmem()),
  };
}

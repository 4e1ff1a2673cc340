import { readFileSync } from 'node:fs';
import { arch, cpus, hostname, platform, release, totalmem } from 'node:os';
import type { FactRecord } from '../../shared/wire/facts-codec.ts';

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

/** The facts about this host that do not change while the agent runs, under the names the broker and agent_info show. */
export function hostFacts(): FactRecord {
  return {
    hostname: hostname(),
    os: osName(),
    kernel: release(),
    arch: arch(),
    cpu_cores: cpus().length,
    memory_total_bytes: totalmem(),
  };
}

import { readFileSync } from 'node:fs';

/**
 * CPU time (user + system, ms) and resident memory (bytes) of a process, from
 * /proc: all of it, and its private (anonymous) part, without the pages of
 * files it maps (the node binary's, shared by every node process on the host).
 */
export function processUsage(pid: number): { cpuMs: number; rssBytes: number; anonRssBytes: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces) start at the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  const anonKb = Number(/^RssAnon:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  // Linux reports CPU time in clock ticks of 10 ms (USER_HZ 100).
  return { cpuMs: ticks * 10, rssBytes: rssKb * 1024, anonRssBytes: anonKb * 1024 };
}

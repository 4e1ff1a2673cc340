import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ScenarioResult {
  scenario: string;
  figures: Record<string, number | string>;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

function show(value: number | string): string {
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return String(value);
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** Prints results as Markdown (for notes and PRs) and keeps them as JSON under bench/results/. */
export function report(command: string, results: ScenarioResult[]): void {
  const lines = [`Command: \`${command}\``, `Machine: ${process.platform} ${process.arch}, Node ${process.version}`, ''];
  for (const result of results) {
    lines.push(`### ${result.scenario}`, '', '| figure | value |', '| --- | --- |');
    for (const [key, value] of Object.entries(result.figures)) lines.push(`| ${key} | ${show(value)} |`);
    lines.push('');
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/bench-${new Date().toISOString().replaceAll(':', '-')}.json`, `${JSON.stringify({ command, results }, null, 2)}\n`);
}

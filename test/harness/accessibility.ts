import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Frame, Page } from 'playwright-core';

/** axe-core's browser bundle, read once. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One rule a page breaks, as a reader of a failed test wants it: which, how bad, where. */
export interface Violation {
  rule: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core in a page or a widget's frame and returns its violations of
 * impact `serious` or `critical`. The engine goes in through the DevTools
 * protocol (evaluate), not a script tag, so the page's Content-Security-Policy
 * stays as strict as users get it. Every rule of axe's default set runs
 * (WCAG 2.x A and AA, and its best practices).
 */
export async function seriousViolations(target: Page | Frame): Promise<Violation[]> {
  await target.evaluate(AXE_SOURCE);
  const results = await target.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    interface AxeViolation {
      id: string;
      impact: string | null;
      help: string;
      nodes: { target: string[] }[];
    }
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations.map((v) => ({ rule: v.id, impact: v.impact ?? 'unknown', help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return results.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

import type { ToolAnswer } from '../call-tool.ts';
import { h } from '../dom.ts';

/**
 * Why one host's answer shows nothing, as a line for the page, or null when
 * it answered: the call's error, the collector absent there (`absent`, said
 * quietly: nothing to collect is no failure), or the host's own errors.
 */
export function answerProblem(answer: ToolAnswer, absent = 'Nothing to collect on this host.'): HTMLElement | null {
  if (answer.error) return h('p', { class: 'status-warning' }, answer.error.message);
  if (((answer.structured?.absent_collectors ?? []) as string[]).length) return h('p', { class: 'muted' }, absent);
  const errors = (answer.structured?.errors ?? []) as { message: string }[];
  return errors.length ? h('p', { class: 'status-warning' }, errors.map((e) => e.message).join('; ')) : null;
}

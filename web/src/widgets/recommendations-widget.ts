import { fixRequest, Recommendations, type RecommendationsAnswer } from '../components/recommendations.ts';
import { h, replace } from '../dom.ts';
import type { Widget } from './widget.ts';

/** What to fix, worst first; choosing a finding puts the request to fix it, with its target and tool, into the conversation. */
export function recommendationsWidget(): Widget {
  const element = h('div', { class: 'widget recommendations-widget' });
  return {
    element,
    show(answer, { say }) {
      if (answer.error) return replace(element, h('p', { class: 'widget-error' }, answer.error.message));
      const view = new Recommendations((finding, button) => {
        button.disabled = true;
        say(fixRequest(finding)).then(
          () => {
            button.textContent = 'Sent to the conversation';
          },
          (error: Error) => {
            button.disabled = false;
            button.textContent = `Not sent: ${error.message}`;
          },
        );
      });
      view.update(answer.structured as unknown as RecommendationsAnswer);
      replace(element, view.element);
    },
  };
}
